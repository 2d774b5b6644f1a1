/// The open containers of a `Codable` encode (``EncoderFrame``s), innermost last, in memory that
/// the encoder owns: counting an entry is a plain store, with no copy-on-write check of an array.
///
/// The encoder that holds the stack frees its memory (``deallocate()``) when it goes; the stack
/// is never copied out of it.
struct EncoderFrameStack {
    private var base: UnsafeMutablePointer<EncoderFrame>
    private var capacity: Int
    /// The number of open frames.
    private(set) var count = 0

    init() {
        capacity = 8
        base = .allocate(capacity: capacity)
    }

    var isEmpty: Bool { count == 0 }

    /// Frame `i` (0 ..< ``count``; any other index stops the program, as an array's would,
    /// rather than touch memory outside the stack). No input reaches that: every caller checks
    /// the index against ``count`` first (`BinaryEncoderImpl.prepareWrite` and the container
    /// openers refuse a failed container's `-1` with an `EncodingError`).
    subscript(i: Int) -> EncoderFrame {
        @inline(__always) get {
            precondition(UInt(bitPattern: i) < UInt(bitPattern: count), "Encoder frame out of range")
            return base[i]
        }
        @inline(__always) nonmutating set {
            precondition(UInt(bitPattern: i) < UInt(bitPattern: count), "Encoder frame out of range")
            base[i] = newValue
        }
    }

    /// Opens a frame.
    @inline(__always)
    mutating func append(_ frame: EncoderFrame) {
        if count == capacity { grow() }
        (base + count).initialize(to: frame)
        count += 1
    }

    /// Closes the innermost frame and returns it; only called while ``count`` is above the
    /// frame to keep (`closeFrames(downTo:)`), so the precondition is never met by input.
    @inline(__always)
    mutating func removeLast() -> EncoderFrame {
        precondition(count > 0, "No encoder frame to close")
        count -= 1
        return base[count]
    }

    /// Closes every frame, keeping the memory.
    mutating func removeAll() { count = 0 }

    /// Frees the memory (the stack is not used again).
    func deallocate() { base.deallocate() }

    private mutating func grow() {
        let larger = UnsafeMutablePointer<EncoderFrame>.allocate(capacity: capacity * 2)
        larger.moveInitialize(from: base, count: count)
        base.deallocate()
        base = larger
        capacity *= 2
    }
}
