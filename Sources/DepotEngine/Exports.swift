// The logger drivers and stores log through (`DepotLogger`) comes with the record engine.
@_exported import DepotSupport
