/// An Objective-C exception reason attached to a crash (iOS 17+).
package struct ExceptionReason: Sendable, Equatable {
    package var composedMessage: String?
    package var formatString: String?
    package var arguments: [String]
    package var exceptionType: String?
    package var className: String?
    package var exceptionName: String?

    package init(
        composedMessage: String? = nil, formatString: String? = nil, arguments: [String] = [],
        exceptionType: String? = nil, className: String? = nil, exceptionName: String? = nil
    ) {
        self.composedMessage = composedMessage
        self.formatString = formatString
        self.arguments = arguments
        self.exceptionType = exceptionType
        self.className = className
        self.exceptionName = exceptionName
    }
}
