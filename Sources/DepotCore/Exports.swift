// The record engine (storage protocols, records, errors) and the logger drivers and stores log
// through (`DepotLogger`) come with the document layer: `import DepotCore` names them all.
@_exported import DepotEngine
@_exported import DepotSupport
