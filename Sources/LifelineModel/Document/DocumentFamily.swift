/// Which endpoint a body was posted to: it decides the shapes accepted.
package enum DocumentFamily: String, Sendable {
    case metric
    case diagnostic
}
