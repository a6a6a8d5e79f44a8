import LearningServices
import Majordomo

/// Where Majordomo bodies meet the learning services: a request body must be exactly one frame,
/// which goes to the service untouched; anything else gets the contract's `bad_request` reply.
/// Sockets never parse JSON, and services never see frames.
public enum FrameHandler {
    /// The worker handler answering each request body with `answer`.
    public static func handler(_ answer: @escaping @Sendable ([UInt8]) -> [UInt8]) -> WorkerSession.Handler {
        { body in
            guard body.count == 1 else {
                let error = ServiceError(
                    .badRequest, "a request is exactly one frame of UTF-8 JSON; this one has \(body.count) frames")
                return [error.replyFrame]
            }
            return [answer(body[0])]
        }
    }

    /// The worker handler of `service`.
    public static func handler(for service: any LearningService) -> WorkerSession.Handler {
        handler(service.handle)
    }
}
