import JSON

extension JSONValue {
    /// This value as a success reply frame, `{"ok":true,"result":…}`: for answers given outside
    /// the services (a worker's node service) in the same contract as theirs.
    public var successReplyFrame: [UInt8] { Reply.success(self) }
}
