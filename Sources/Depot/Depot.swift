public enum DepotPlaceholder {}
