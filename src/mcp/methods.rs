//! The wire table: every JSON-RPC method tai sends or answers, with its direction.
//!
//! The typed request/result pairs live beside the client; this table is the list the
//! docs contract and the server's dispatcher are checked against.

/// Who sends the message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Client to server.
    ClientToServer,
    /// Server to client.
    ServerToClient,
    /// Either side may send it.
    Both,
}

/// Whether the message expects an answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Request,
    Notification,
}

/// One row of the wire table.
#[derive(Clone, Copy, Debug)]
pub struct WireMethod {
    pub name: &'static str,
    pub direction: Direction,
    pub kind: Kind,
}

pub const INITIALIZE: &str = "initialize";
pub const INITIALIZED: &str = "notifications/initialized";
pub const PING: &str = "ping";
pub const TOOLS_LIST: &str = "tools/list";
pub const TOOLS_CALL: &str = "tools/call";
pub const CANCELLED: &str = "notifications/cancelled";
pub const SERVER_DISCOVER: &str = "server/discover";
pub const TOOLS_LIST_CHANGED: &str = "notifications/tools/list_changed";
pub const SUBSCRIPTIONS_LISTEN: &str = "subscriptions/listen";

const fn row(name: &'static str, direction: Direction, kind: Kind) -> WireMethod {
    WireMethod {
        name,
        direction,
        kind,
    }
}

/// Every method of the shared wire subset, in the order `docs/mcp.md` lists them.
pub const WIRE: &[WireMethod] = &[
    row(INITIALIZE, Direction::ClientToServer, Kind::Request),
    row(INITIALIZED, Direction::ClientToServer, Kind::Notification),
    row(PING, Direction::Both, Kind::Request),
    row(TOOLS_LIST, Direction::ClientToServer, Kind::Request),
    row(TOOLS_CALL, Direction::ClientToServer, Kind::Request),
    row(CANCELLED, Direction::ClientToServer, Kind::Notification),
    row(SERVER_DISCOVER, Direction::ClientToServer, Kind::Request),
    row(
        TOOLS_LIST_CHANGED,
        Direction::ServerToClient,
        Kind::Notification,
    ),
    row(
        SUBSCRIPTIONS_LISTEN,
        Direction::ClientToServer,
        Kind::Request,
    ),
];
