// PersistentObject's names for Depot's calls (mattcomi/PersistentObject).
//
// A port from PersistentObject maps as follows. `PersistentObject<Person>(repository:)` is a
// ``Persistent`` bound to a key in a repository: `Persistent<Person>(key:store:)` (a store's
// key/value keyspace, in place of `UserDefaultsRepository`) or `Persistent(key:repository:)`
// with a ``FileRepository`` (files in a folder, as PersistentObject's `FileRepository`) or
// your own ``PersistentRepository`` (PersistentObject's `Repository`: `archive` is
// `save(_:forKey:)`, `unarchive` is `load(_:)`, and external changes are reported through
// `observe(_:_:)`). Values are `Codable & Sendable` (PersistentObject's were `NSCoding`).
//
// Same name, same meaning in Depot (not repeated here): `reset(_:)` (unsaved until a save),
// `save()`, saving on deinit, and `synchronize()` — which in Depot saves unsaved changes and
// reads the repository again (PersistentObject asked its repository to synchronize).
//
// Not forwarded: the app-lifecycle saves (background, resign active): call `flush()` from the
// app's own lifecycle hook.
//
// Each forward below calls the one Depot call named in its documentation.

import Foundation

/// PersistentObject's `PersistentObject<ObjectType>`: a Depot ``Persistent``.
public typealias PersistentObject<ObjectType: Codable & Sendable> = Persistent<ObjectType>

extension Persistent {
    /// PersistentObject's `object`: forwards to ``value`` (read only, as PersistentObject's is;
    /// replace it with ``reset(_:)``).
    public var object: Value? {
        value
    }

    /// PersistentObject's delegate closure `objectChangedExternally`: forwards to
    /// ``onExternalChange``.
    ///
    /// Called with the new value (PersistentObject's closure received the persistent object,
    /// whose `object` was already replaced); the value is replaced before the call here too.
    public var objectChangedExternally: (@Sendable (Value?) -> Void)? {
        get { onExternalChange }
        set { onExternalChange = newValue }
    }
}
