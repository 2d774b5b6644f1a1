// `import Depot` is the document layer (DepotCore) with its LMDB driver (this module).
@_exported import DepotCore
