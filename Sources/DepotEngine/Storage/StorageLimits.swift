/// Limits the document layer assumes of a storage driver unless the driver states its own.
public enum StorageLimits {
    /// The longest key LMDB accepts in its default build (`MDB_MAXKEYSIZE`, 511 bytes): the
    /// default of ``StorageTransaction/maxKeySize``. `Environment.standardMaxKeySize` (DepotLMDB)
    /// is the same number, checked by a test.
    public static let standardMaxKeySize = 511
}
