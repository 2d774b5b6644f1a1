/// `bytes` as a string when they are valid UTF-8, else nil.
///
/// Used instead of `String(validating:as:)`, which needs macOS 15 / iOS 18: with it, the package
/// can support macOS 14 / iOS 17. Invalid sequences decode to U+FFFD, so a lossless decode
/// proves validity.
package func validUTF8String<Bytes: Collection>(_ bytes: Bytes) -> String? where Bytes.Element == UInt8 {
    let text = String(decoding: bytes, as: UTF8.self)
    return text.utf8.elementsEqual(bytes) ? text : nil
}
