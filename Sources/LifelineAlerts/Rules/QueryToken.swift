/// A token of the rule query language, with its 1-based column.
struct QueryToken: Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        case identifier(String)
        case string(String)
        case number(Double)
        case punctuation(Character)
        case end
    }

    var kind: Kind
    var column: Int

    /// How the token reads in an error message.
    var display: String {
        switch kind {
        case .identifier(let name): "\"\(name)\""
        case .string(let text): "string \"\(text)\""
        case .number(let value): "number \(value)"
        case .punctuation(let character): "'\(character)'"
        case .end: "end of query"
        }
    }

    /// Splits `text` into tokens; identifiers may contain dots (`launch.time_to_first_draw`).
    static func tokenize(_ text: String) throws(QuerySyntaxError) -> [QueryToken] {
        let characters = Array(text)
        var tokens: [QueryToken] = []
        var i = 0
        while i < characters.count {
            let c = characters[i]
            let column = i + 1
            if c.isWhitespace {
                i += 1
            } else if c.isLetter || c == "_" {
                var j = i
                while j < characters.count,
                    characters[j].isLetter || characters[j].isNumber || characters[j] == "_" || characters[j] == "."
                {
                    j += 1
                }
                tokens.append(QueryToken(kind: .identifier(String(characters[i..<j])), column: column))
                i = j
            } else if c.isNumber
                || ((c == "-" || c == "+" || c == ".") && i + 1 < characters.count
                    && (characters[i + 1].isNumber || characters[i + 1] == "."))
            {
                var j = i + 1
                while j < characters.count,
                    characters[j].isNumber || characters[j] == "." || characters[j] == "_" || characters[j] == "e"
                        || characters[j] == "E"
                        || ((characters[j] == "-" || characters[j] == "+")
                            && (characters[j - 1] == "e" || characters[j - 1] == "E"))
                {
                    j += 1
                }
                let literal = String(characters[i..<j]).replacingUnderscores()
                guard let value = Double(literal), value.isFinite else {
                    throw QuerySyntaxError(column: column, "\"\(literal)\" is not a number")
                }
                tokens.append(QueryToken(kind: .number(value), column: column))
                i = j
            } else if c == "\"" || c == "'" {
                var j = i + 1
                var value = ""
                var closed = false
                while j < characters.count {
                    let d = characters[j]
                    if d == "\\", j + 1 < characters.count {
                        value.append(characters[j + 1])
                        j += 2
                    } else if d == c {
                        closed = true
                        j += 1
                        break
                    } else {
                        value.append(d)
                        j += 1
                    }
                }
                guard closed else { throw QuerySyntaxError(column: column, "string is not closed (missing \(c))") }
                tokens.append(QueryToken(kind: .string(value), column: column))
                i = j
            } else if "{}(),=".contains(c) {
                tokens.append(QueryToken(kind: .punctuation(c), column: column))
                i += 1
            } else {
                throw QuerySyntaxError(column: column, "unexpected character '\(c)'")
            }
        }
        tokens.append(QueryToken(kind: .end, column: characters.count + 1))
        return tokens
    }
}

extension String {
    fileprivate func replacingUnderscores() -> String { String(filter { $0 != "_" }) }
}
