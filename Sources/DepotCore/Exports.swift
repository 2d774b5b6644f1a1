// The logger drivers and stores log through (`DepotLogger`) comes with the document layer.
@_exported import DepotSupport
