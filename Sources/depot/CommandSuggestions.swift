import ArgumentParser

/// "unknown command 'qurey'; did you mean 'query'?" instead of argument-parser's
/// "Unknown option '--path'" when a subcommand name is mistyped.
enum CommandSuggestions {
    /// The message for the first mistyped subcommand name in `arguments`, or nil.
    static func unknownCommand(in arguments: [String], root: any ParsableCommand.Type, trail: [String] = []) -> String? {
        var command = root
        var trail = trail
        for (position, argument) in arguments.enumerated() {
            let subcommands = command.configuration.subcommands
            guard !subcommands.isEmpty, !argument.hasPrefix("-") else { return nil }
            if argument == "help" {
                // `depot help doc get`: the words after `help` name a command, checked the same way.
                return unknownCommand(in: Array(arguments[(position + 1)...]), root: command, trail: trail)
            }
            let names = subcommands.map { $0._commandName } + subcommands.flatMap { $0.configuration.aliases }
            guard let next = subcommands.first(where: { $0._commandName == argument || $0.configuration.aliases.contains(argument) }) else {
                let scope = (["depot"] + trail).joined(separator: " ")
                var message = "unknown command '\(argument)'"
                if let best = closest(to: argument, in: names) { message += "; did you mean '\(best)'?" }
                let visible = subcommands.filter { $0.configuration.shouldDisplay }.map { $0._commandName }
                message += "\n(commands of '\(scope)': \(visible.joined(separator: ", ")); see '\(scope) --help')"
                return message
            }
            trail.append(argument)
            command = next
        }
        return nil
    }

    /// The name nearest to `word` (edit distance at most 2, or a prefix), if any.
    static func closest(to word: String, in names: [String]) -> String? {
        let scored = names.map { (name: $0, distance: editDistance(word.lowercased(), $0)) }
        if let best = scored.min(by: { $0.distance < $1.distance }), best.distance <= max(1, min(2, word.count / 2)) {
            return best.name
        }
        return names.first { $0.hasPrefix(word.lowercased()) && word.count >= 2 }
    }

    /// Levenshtein distance, with a transposition counting as one edit.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var d = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { d[i][0] = i }
        for j in 0...b.count { d[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
                }
            }
        }
        return d[a.count][b.count]
    }
}
