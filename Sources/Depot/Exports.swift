// `import Depot` is the document layer (DepotCore) on LMDB: this module's driver, and the binding
// (DepotLMDB: `Environment`, `Transaction`, codecs) that its API names.
@_exported import DepotCore
@_exported import DepotLMDB
