import Hummingbird

/// Counts every request by route pattern, method and status, and times it.
struct MetricsMiddleware: RouterMiddleware {
    typealias Context = LifelineRequestContext
    let metrics: ServiceMetrics

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let started = ContinuousClock.now
        do {
            let response = try await next(request, context)
            record(request, context, status: response.status.code, since: started)
            return response
        } catch {
            let status = (error as? any HTTPResponseError)?.status.code ?? 500
            record(request, context, status: status, since: started)
            throw error
        }
    }

    private func record(_ request: Request, _ context: Context, status: Int, since started: ContinuousClock.Instant) {
        let route = context.endpointPath ?? "unmatched"
        metrics.request(
            route: route == "NotFound" ? "unmatched" : route, method: request.method.rawValue, status: status,
            duration: started.duration(to: .now))
    }
}
