/// A fetch result is the collection of its documents (`result.map(\.name)`, `result.count`,
/// `for employee in result`), with the plan beside them in ``FetchResult/plan``.
extension FetchResult: RandomAccessCollection {
    /// The position of the first document (0).
    public var startIndex: Int { documents.startIndex }
    /// The position after the last document.
    public var endIndex: Int { documents.endIndex }
    /// The document at `position`.
    public subscript(position: Int) -> D { documents[position] }
}
