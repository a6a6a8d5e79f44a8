// Local stand-in so the package resolves; not committed (the ZeroMQ tests live on another branch).
