// `DepotLogger` lives in DepotSupport (the document layer logs through it too, without LMDB):
// importing DepotLMDB keeps bringing it.
@_exported import DepotSupport
