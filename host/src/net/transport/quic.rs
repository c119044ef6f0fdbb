//! QUIC over UDP (quinn): one connection per client. Reliable frames travel on one bidirectional stream,
//! length-delimited and capped at [`MAX_FRAME`](crate::net::protocol::MAX_FRAME) — a larger one closes the
//! connection that sent it; unreliable frames travel as QUIC datagrams (on the stream when one is too large for
//! a datagram); bulk frames travel on a unidirectional stream of the server's, opened at the first, at a lower
//! priority than the reliable stream, so a package being fetched never holds up an update. The server shows a certificate of its own or a self-signed one made at start; a client
//! verifies it before it says a word (see [`super::trust`]): pinned, against authorities, or — for a
//! development server on this machine only — not at all.
//!
//! The network runs on tokio tasks; the game's loop meets them through channels, polling for what arrived.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use quinn::crypto::rustls::{QuicClientConfig, QuicServerConfig};
use quinn::{Connection, ConnectionError, Endpoint, RecvStream, SendStream};
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};
use tokio_util::codec::{FramedRead, FramedWrite, LengthDelimitedCodec};

use super::trust::{Fingerprint, ServerIdentity, ServerTrust};
use super::{Channel, ClientEvent, ClientTransport, ServerEvent, ServerTransport};
use crate::net::protocol::MAX_FRAME;
use crate::world::ClientId;

/// The application protocol both ends name in the TLS handshake.
pub const ALPN: &[u8] = b"gamefeature/1";

/// How long a connected client has to open its stream.
const OPEN_STREAM_WAIT: Duration = Duration::from_secs(5);

/// A connection quiet for this long is over: a client killed or paused is noticed in seconds. Keep-alives
/// are sent by the network's own tasks, well within it, however busy the game's loop (a first load) is.
const IDLE_TIMEOUT: Duration = Duration::from_secs(3);
const KEEP_ALIVE: Duration = Duration::from_millis(750);

/// How long a closing connection waits for its peer to receive what was sent before it.
const FLUSH_ON_CLOSE: Duration = Duration::from_secs(2);

/// Reliable bytes queued for one peer at most: a peer that stops reading (or grants no flow-control credit) is
/// closed rather than left to grow the sender's memory.
const MAX_QUEUED: usize = 16 << 20;

/// Bytes one client may have sent that the server's loop has not yet read: an honest client sends a hello and
/// then an acknowledgement a frame (a few hundred bytes), so this is seconds of a stalled server loop. A client
/// sending faster than the server reads is closed, so it can neither grow the server's memory nor fill its
/// frames with its messages.
pub const MAX_UNREAD_PER_CLIENT: usize = 256 << 10;

/// A network that could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum QuicError {
    /// The server could not open its UDP socket (the port is taken, say).
    #[error("cannot listen on {addr}: {cause}")]
    Bind {
        /// The address the server was to listen on.
        addr: SocketAddr,
        /// Why it could not.
        cause: String,
    },
    /// No server completed a handshake at the address in time: none runs there, or a firewall drops its packets.
    #[error("no server answered at {addr} within {:.1} s", waited.as_secs_f64())]
    NoServer {
        /// The address the client tried.
        addr: SocketAddr,
        /// How long it waited for an answer.
        waited: Duration,
    },
    /// The connection failed: the server's certificate was not trusted, the insecure mode was asked for a remote
    /// address, or the connection broke.
    #[error("cannot connect to {addr}: {cause}")]
    Connect {
        /// The address the client tried.
        addr: SocketAddr,
        /// Why the connection failed.
        cause: String,
    },
    /// The server's certificate and key could not be used for TLS; rustls's reason.
    #[error("setting up TLS: {0}")]
    Tls(String),
}

fn codec() -> LengthDelimitedCodec {
    LengthDelimitedCodec::builder().max_frame_length(MAX_FRAME).new_codec()
}

fn transport_config() -> Arc<quinn::TransportConfig> {
    let mut config = quinn::TransportConfig::default();
    config.max_idle_timeout(Some(IDLE_TIMEOUT.try_into().expect("a small timeout")));
    config.keep_alive_interval(Some(KEEP_ALIVE));
    Arc::new(config)
}

/// Why a connection ended, in words for a log. A reason the peer gave is its own text: shown as data (control
/// characters escaped, length capped), so it cannot forge lines in a log or drive a terminal.
fn why(error: &ConnectionError) -> String {
    let said = match error {
        ConnectionError::ApplicationClosed(close) => String::from_utf8_lossy(&close.reason).into_owned(),
        ConnectionError::TimedOut => "the connection timed out".to_string(),
        ConnectionError::LocallyClosed => "closed here".to_string(),
        other => other.to_string(),
    };
    crate::text::shown(&said, crate::text::MAX_CAUSE)
}

/// Why a connection ends when the game that read it is gone.
const NOBODY_LISTENING: &str = "nobody is listening";

/// What a connection's writer task is asked to do.
enum Outbound {
    Frame(Bytes),
    /// Flush what was sent, then close the connection with this reason.
    Close(String),
}

/// Writes `first` (if any), then the frames `outbound` receives, in order (counting down `queued` as they go);
/// on `Close`, waits (boundedly) for the peer to have them, then closes.
async fn write_frames(
    send: SendStream,
    mut first: Option<Outbound>,
    mut outbound: UnboundedReceiver<Outbound>,
    connection: Connection,
    queued: Arc<AtomicUsize>,
) {
    let mut frames = FramedWrite::new(send, codec());
    loop {
        let next = match first.take() {
            Some(next) => next,
            None => match outbound.recv().await {
                Some(next) => next,
                None => return,
            },
        };
        match next {
            Outbound::Frame(frame) => {
                let len = frame.len();
                let sent = frames.send(frame).await;
                queued.fetch_sub(len, Ordering::Relaxed);
                if sent.is_err() {
                    return;
                }
            }
            Outbound::Close(reason) => {
                let mut send = frames.into_inner();
                let _ = send.finish();
                let _ = tokio::time::timeout(FLUSH_ON_CLOSE, send.stopped()).await;
                connection.close(0u32.into(), reason.as_bytes());
                return;
            }
        }
    }
}

/// Reads a connection's reliable frames and datagrams until it ends or `received` refuses one (with why);
/// returns why it ended.
async fn read_frames(
    recv: RecvStream,
    connection: Connection,
    mut received: impl FnMut(Vec<u8>) -> Result<(), String>,
) -> String {
    let mut frames = FramedRead::new(recv, codec());
    loop {
        tokio::select! {
            frame = frames.next() => match frame {
                Some(Ok(frame)) => if let Err(reason) = received(frame.to_vec()) { return reason },
                // A stream that fails because its connection closed says why the connection closed, not that a
                // frame was bad.
                Some(Err(_)) if connection.close_reason().is_some() => {
                    return connection.close_reason().map(|e| why(&e)).unwrap_or_default();
                }
                Some(Err(e)) => {
                    let reason = format!("closed for a bad frame: {e}");
                    connection.close(1u32.into(), reason.as_bytes());
                    return reason;
                }
                None => {
                    // The stream ended: the connection's close (and its reason) follows.
                    return why(&connection.closed().await);
                }
            },
            datagram = connection.read_datagram() => match datagram {
                Ok(datagram) => if let Err(reason) = received(datagram.to_vec()) { return reason },
                Err(e) => return why(&e),
            },
        }
    }
}

struct Link {
    connection: Connection,
    outbound: UnboundedSender<Outbound>,
    queued: Arc<AtomicUsize>,
    /// Bulk frames, written by a task that opens the bulk stream when the first arrives.
    bulk: Option<(UnboundedSender<Outbound>, Arc<AtomicUsize>)>,
    /// Bytes received from the peer that the game's loop has not read yet.
    unread: Arc<AtomicUsize>,
}

impl Link {
    /// Queues a frame on the reliable stream, or the bulk stream where there is one and it is asked for, unless
    /// the peer is too far behind: then its connection is closed.
    fn queue(&self, channel: Channel, frame: Bytes) {
        let (outbound, queued) = match (&self.bulk, channel) {
            (Some((outbound, queued)), Channel::Bulk) => (outbound, queued),
            _ => (&self.outbound, &self.queued),
        };
        if queued.fetch_add(frame.len(), Ordering::Relaxed) + frame.len() > MAX_QUEUED {
            self.connection.close(2u32.into(), b"too slow: it stopped taking what was sent to it");
            return;
        }
        let _ = outbound.send(Outbound::Frame(frame));
    }
}

/// The priority of the bulk stream: below the reliable stream's (0), so quinn sends it only when the reliable
/// stream has nothing waiting.
const BULK_PRIORITY: i32 = -1;

/// Writes bulk frames on a unidirectional stream opened when the first is queued.
async fn write_bulk(connection: Connection, mut outbound: UnboundedReceiver<Outbound>, queued: Arc<AtomicUsize>) {
    let Some(first) = outbound.recv().await else { return };
    let Ok(send) = connection.open_uni().await else { return };
    let _ = send.set_priority(BULK_PRIORITY);
    write_frames(send, Some(first), outbound, connection, queued).await;
}

/// Reads the bulk streams a server opens, handing each frame to `received`, until the connection ends.
async fn read_bulk(connection: Connection, received: impl Fn(Vec<u8>) -> Result<(), String> + Send + Sync + 'static) {
    let received = Arc::new(received);
    while let Ok(recv) = connection.accept_uni().await {
        let received = received.clone();
        tokio::spawn(async move {
            let mut frames = FramedRead::new(recv, codec());
            while let Some(Ok(frame)) = frames.next().await {
                if received(frame.to_vec()).is_err() {
                    return;
                }
            }
        });
    }
}

/// The server's end: a UDP socket accepting QUIC connections.
pub struct QuicServer {
    endpoint: Endpoint,
    fingerprint: Fingerprint,
    events: Receiver<ServerEvent>,
    links: Arc<Mutex<HashMap<ClientId, Link>>>,
    /// What connections closed so far carried: the server's totals outlive its connections.
    closed: Arc<Mutex<super::Traffic>>,
    runtime: tokio::runtime::Handle,
}

impl QuicServer {
    /// Listens on `addr` (port 0: any free port), showing `identity`; its tasks run on `runtime`.
    pub fn bind(
        addr: SocketAddr,
        identity: ServerIdentity,
        runtime: &tokio::runtime::Handle,
    ) -> Result<QuicServer, QuicError> {
        let _entered = runtime.enter();
        let tls = |e: &dyn std::fmt::Display| QuicError::Tls(e.to_string());
        let fingerprint = identity.fingerprint();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut crypto = rustls::ServerConfig::builder_with_provider(provider)
            .with_protocol_versions(&[&rustls::version::TLS13])
            .map_err(|e| tls(&e))?
            .with_no_client_auth()
            .with_single_cert(identity.chain, identity.key)
            .map_err(|e| tls(&e))?;
        crypto.alpn_protocols = vec![ALPN.to_vec()];
        let crypto = QuicServerConfig::try_from(crypto).map_err(|e| tls(&e))?;
        let mut config = quinn::ServerConfig::with_crypto(Arc::new(crypto));
        config.transport_config(transport_config());
        let endpoint = Endpoint::server(config, addr).map_err(|e| QuicError::Bind { addr, cause: e.to_string() })?;
        let (events_in, events) = channel();
        let links: Arc<Mutex<HashMap<ClientId, Link>>> = Arc::default();
        let closed: Arc<Mutex<super::Traffic>> = Arc::default();
        runtime.spawn(accept(endpoint.clone(), events_in, links.clone(), closed.clone()));
        Ok(QuicServer { endpoint, fingerprint, events, links, closed, runtime: runtime.clone() })
    }

    /// The SHA-256 of its certificate: what clients pin.
    pub fn fingerprint(&self) -> Fingerprint {
        self.fingerprint
    }

    /// The address it listens on (with the port it got, when asked for port 0).
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.endpoint.local_addr()
    }

    fn with_link<R>(&self, client: ClientId, f: impl FnOnce(&Link) -> R) -> Option<R> {
        let links = self.links.lock().unwrap_or_else(|e| e.into_inner());
        links.get(&client).map(f)
    }
}

async fn accept(
    endpoint: Endpoint,
    events: Sender<ServerEvent>,
    links: Arc<Mutex<HashMap<ClientId, Link>>>,
    closed: Arc<Mutex<super::Traffic>>,
) {
    let mut next = 1;
    while let Some(incoming) = endpoint.accept().await {
        // A peer must show it receives at its address before it costs the server a connection: a flood from
        // forged addresses ends here (QUIC's address validation, one more round trip).
        if !incoming.remote_address_validated() && incoming.may_retry() {
            let _ = incoming.retry();
            continue;
        }
        let client = ClientId(next);
        next += 1;
        tokio::spawn(serve(incoming, client, events.clone(), links.clone(), closed.clone()));
    }
}

/// One client's connection, from handshake to close.
async fn serve(
    incoming: quinn::Incoming,
    client: ClientId,
    events: Sender<ServerEvent>,
    links: Arc<Mutex<HashMap<ClientId, Link>>>,
    closed: Arc<Mutex<super::Traffic>>,
) {
    // A failed handshake, or a client that does not open its stream soon, never became a client.
    let Ok(connection) = incoming.await else { return };
    let Ok(Ok((send, recv))) = tokio::time::timeout(OPEN_STREAM_WAIT, connection.accept_bi()).await else {
        connection.close(3u32.into(), b"no stream opened");
        add_traffic(&closed, &connection);
        return;
    };
    let (outbound, waiting) = unbounded_channel();
    let queued = Arc::new(AtomicUsize::new(0));
    let unread = Arc::new(AtomicUsize::new(0));
    let (bulk, bulk_waiting) = unbounded_channel();
    let bulk_queued = Arc::new(AtomicUsize::new(0));
    tokio::spawn(write_bulk(connection.clone(), bulk_waiting, bulk_queued.clone()));
    let link = Link {
        connection: connection.clone(),
        outbound,
        queued: queued.clone(),
        bulk: Some((bulk, bulk_queued)),
        unread: unread.clone(),
    };
    links.lock().unwrap_or_else(|e| e.into_inner()).insert(client, link);
    if events.send(ServerEvent::Connected(client)).is_err() {
        return;
    }
    tokio::spawn(write_frames(send, None, waiting, connection.clone(), queued));
    let closer = connection.clone();
    let connection_of_link = connection.clone();
    let reason = read_frames(recv, connection, |frame| {
        let len = frame.len();
        if unread.fetch_add(len, Ordering::Relaxed) + len > MAX_UNREAD_PER_CLIENT {
            let reason =
                format!("flooding: it sent more than {MAX_UNREAD_PER_CLIENT} bytes the server had not read yet");
            closer.close(4u32.into(), reason.as_bytes());
            return Err(reason);
        }
        events.send(ServerEvent::Received(client, frame)).map_err(|_| NOBODY_LISTENING.to_string())
    })
    .await;
    links.lock().unwrap_or_else(|e| e.into_inner()).remove(&client);
    add_traffic(&closed, &connection_of_link);
    let _ = events.send(ServerEvent::Disconnected(client, reason));
}

/// What a connection carried, as quinn counts it.
fn traffic_of(connection: &quinn::Connection) -> super::Traffic {
    let stats = connection.stats();
    super::Traffic {
        bytes_sent: stats.udp_tx.bytes,
        packets_sent: stats.udp_tx.datagrams,
        bytes_received: stats.udp_rx.bytes,
        packets_received: stats.udp_rx.datagrams,
        round_trip: Some(stats.path.rtt),
    }
}

/// Adds what a closing connection carried to the totals of those closed.
fn add_traffic(closed: &Mutex<super::Traffic>, connection: &quinn::Connection) {
    let mut closed = closed.lock().unwrap_or_else(|e| e.into_inner());
    *closed = closed.plus(traffic_of(connection));
}

impl ServerTransport for QuicServer {
    fn poll(&mut self) -> Vec<ServerEvent> {
        let events: Vec<ServerEvent> = self.events.try_iter().collect();
        let links = self.links.lock().unwrap_or_else(|e| e.into_inner());
        for event in &events {
            if let ServerEvent::Received(client, frame) = event {
                if let Some(link) = links.get(client) {
                    link.unread.fetch_sub(frame.len(), Ordering::Relaxed);
                }
            }
        }
        events
    }

    fn send(&mut self, client: ClientId, channel: Channel, frame: Vec<u8>) {
        let frame = Bytes::from(frame);
        self.with_link(client, |link| {
            let fits = link.connection.max_datagram_size().is_some_and(|max| frame.len() <= max);
            if channel == Channel::Unreliable && fits {
                let _ = link.connection.send_datagram(frame);
            } else {
                link.queue(channel, frame);
            }
        });
    }

    /// Closes once what was queued has reached the client — or, if it does not take it, after
    /// [`FLUSH_ON_CLOSE`] regardless.
    fn disconnect(&mut self, client: ClientId, reason: &str) {
        let connection = self.with_link(client, |link| {
            let _ = link.outbound.send(Outbound::Close(reason.to_string()));
            link.connection.clone()
        });
        if let Some(connection) = connection {
            let reason = reason.to_string();
            self.runtime.spawn(async move {
                tokio::time::sleep(FLUSH_ON_CLOSE * 2).await;
                connection.close(0u32.into(), reason.as_bytes());
            });
        }
    }

    fn peer_address(&self, client: ClientId) -> Option<SocketAddr> {
        self.with_link(client, |link| link.connection.remote_address())
    }

    /// UDP bytes: QUIC headers, encryption and acknowledgements included.
    fn bytes_sent(&self) -> u64 {
        let links = self.links.lock().unwrap_or_else(|e| e.into_inner());
        links.values().map(|l| l.connection.stats().udp_tx.bytes).sum()
    }

    /// UDP datagrams and their bytes, as quinn counts them.
    fn traffic(&self, client: ClientId) -> Option<super::Traffic> {
        self.with_link(client, |link| traffic_of(&link.connection))
    }

    fn queued(&self, client: ClientId, channel: Channel) -> usize {
        self.with_link(client, |link| match (&link.bulk, channel) {
            (Some((_, queued)), Channel::Bulk) => queued.load(Ordering::Relaxed),
            _ => link.queued.load(Ordering::Relaxed),
        })
        .unwrap_or(0)
    }

    /// The connections open now, and those closed since the server started.
    fn total_traffic(&self) -> super::Traffic {
        let closed = *self.closed.lock().unwrap_or_else(|e| e.into_inner());
        let links = self.links.lock().unwrap_or_else(|e| e.into_inner());
        links.values().fold(closed, |total, link| total.plus(traffic_of(&link.connection)))
    }
}

impl Drop for QuicServer {
    fn drop(&mut self) {
        self.endpoint.close(0u32.into(), b"the server stopped");
    }
}

/// A client's end: one QUIC connection to a server.
pub struct QuicClient {
    endpoint: Endpoint,
    events: Receiver<ClientEvent>,
    link: Link,
}

impl QuicClient {
    /// Connects to the server at `addr`, trusting it as `trust` says (nothing is sent to a server it does not
    /// trust), waiting at most `wait` for it to answer. Must run inside a tokio runtime, which then carries the
    /// connection's tasks.
    pub async fn connect(addr: SocketAddr, trust: &ServerTrust, wait: Duration) -> Result<QuicClient, QuicError> {
        let failed = |cause: String| QuicError::Connect { addr, cause };
        trust.check_address(addr).map_err(|e| failed(e.to_string()))?;
        let local: SocketAddr = if addr.is_ipv4() { "0.0.0.0:0" } else { "[::]:0" }.parse().expect("valid");
        let mut endpoint = Endpoint::client(local).map_err(|e| failed(e.to_string()))?;
        endpoint.set_default_client_config(client_config(trust).map_err(failed)?);
        let connecting = endpoint.connect(addr, trust.server_name()).map_err(|e| failed(e.to_string()))?;
        // The time said is the time waited: the handshake also ends at the connection's idle timeout.
        let started = std::time::Instant::now();
        let connection = match tokio::time::timeout(wait, connecting).await {
            Err(_) => return Err(QuicError::NoServer { addr, waited: started.elapsed() }),
            Ok(Err(ConnectionError::TimedOut)) => return Err(QuicError::NoServer { addr, waited: started.elapsed() }),
            Ok(Err(e)) => return Err(failed(why(&e))),
            Ok(Ok(connection)) => connection,
        };
        let (send, recv) = connection.open_bi().await.map_err(|e| failed(why(&e)))?;
        let (outbound, waiting) = unbounded_channel();
        let queued = Arc::new(AtomicUsize::new(0));
        tokio::spawn(write_frames(send, None, waiting, connection.clone(), queued.clone()));
        let (events_in, events) = channel();
        let bulk_events = events_in.clone();
        tokio::spawn(read_bulk(connection.clone(), move |frame| {
            bulk_events.send(ClientEvent::Received(frame)).map_err(|_| NOBODY_LISTENING.to_string())
        }));
        let reader = connection.clone();
        tokio::spawn(async move {
            let received =
                |frame| events_in.send(ClientEvent::Received(frame)).map_err(|_| NOBODY_LISTENING.to_string());
            let reason = read_frames(recv, reader, received).await;
            let _ = events_in.send(ClientEvent::Disconnected(reason));
        });
        let unread = Arc::default();
        Ok(QuicClient { endpoint, events, link: Link { connection, outbound, queued, bulk: None, unread } })
    }
}

impl QuicClient {
    /// `sha256:<hex>` of the certificate the server presented: what a client remembers a server by (its players'
    /// answers about its plugins, say), as SSH remembers host keys.
    pub fn server_certificate_sha256(&self) -> Option<String> {
        let identity = self.link.connection.peer_identity()?;
        let chain = identity.downcast::<Vec<rustls::pki_types::CertificateDer<'static>>>().ok()?;
        chain.first().map(|certificate| crate::package::sha256_digest(certificate.as_ref()))
    }
}

impl ClientTransport for QuicClient {
    fn poll(&mut self) -> Vec<ClientEvent> {
        self.events.try_iter().collect()
    }

    fn send(&mut self, channel: Channel, frame: Vec<u8>) {
        let frame = Bytes::from(frame);
        let fits = self.link.connection.max_datagram_size().is_some_and(|max| frame.len() <= max);
        if channel == Channel::Unreliable && fits {
            let _ = self.link.connection.send_datagram(frame);
        } else {
            self.link.queue(channel, frame);
        }
    }

    fn disconnect(&mut self, reason: &str) {
        let _ = self.link.outbound.send(Outbound::Close(reason.to_string()));
    }

    /// Waits (at most twice [`FLUSH_ON_CLOSE`]) for the connection to close and its close to be sent.
    fn closed(&mut self) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + '_>> {
        let (connection, endpoint) = (self.link.connection.clone(), self.endpoint.clone());
        Box::pin(async move {
            let _ = tokio::time::timeout(FLUSH_ON_CLOSE * 2, async {
                connection.closed().await;
                endpoint.wait_idle().await;
            })
            .await;
        })
    }
}

impl Drop for QuicClient {
    fn drop(&mut self) {
        self.endpoint.close(0u32.into(), b"the client stopped");
    }
}

/// TLS for clients: TLS 1.3 with the ALPN, the server verified as `trust` says.
fn client_config(trust: &ServerTrust) -> Result<quinn::ClientConfig, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut crypto = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(|e| e.to_string())?
        .dangerous()
        .with_custom_certificate_verifier(trust.verifier(provider)?)
        .with_no_client_auth();
    crypto.alpn_protocols = vec![ALPN.to_vec()];
    let crypto = QuicClientConfig::try_from(crypto).map_err(|e| e.to_string())?;
    let mut config = quinn::ClientConfig::new(Arc::new(crypto));
    config.transport_config(transport_config());
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A client sending faster than the server's loop reads is closed once the server holds
    /// [`MAX_UNREAD_PER_CLIENT`] of its bytes: the server's memory for it stays bounded, however much it sends,
    /// and an honest client beside it is heard as before.
    #[test]
    fn a_client_sending_faster_than_the_server_reads_is_closed_with_its_unread_bytes_bounded() {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let identity = ServerIdentity::self_signed().unwrap();
        let pin = ServerTrust::Pinned(identity.fingerprint());
        let mut server = QuicServer::bind("127.0.0.1:0".parse().unwrap(), identity, runtime.handle()).unwrap();
        let addr = server.local_addr().unwrap();
        let mut honest = runtime.block_on(QuicClient::connect(addr, &pin, Duration::from_secs(10))).unwrap();
        honest.send(Channel::Reliable, b"hello".to_vec());
        let mut client = runtime.block_on(QuicClient::connect(addr, &pin, Duration::from_secs(10))).unwrap();
        // 4 MiB, while the server's loop reads nothing.
        for _ in 0..4096 {
            client.send(Channel::Reliable, vec![7u8; 1024]);
        }
        let mut told = None;
        for _ in 0..2000 {
            told = client.poll().into_iter().find_map(|event| match event {
                ClientEvent::Disconnected(why) => Some(why),
                ClientEvent::Received(_) => None,
            });
            if told.is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let told = told.expect("the flooding client is closed");
        assert!(crate::text::is_printable(&told), "{told:?}");
        assert!(told.starts_with("flooding: it sent more than 262144 bytes"), "{told}");
        let events = server.poll();
        let unread: usize = events
            .iter()
            .map(|event| match event {
                ServerEvent::Received(_, frame) => frame.len(),
                _ => 0,
            })
            .sum();
        // Of the flooder's bytes at most its share, and the honest client's hello beside them.
        assert!(unread <= MAX_UNREAD_PER_CLIENT + 5, "{unread} bytes held");
        let hello = |event: &ServerEvent| matches!(event, ServerEvent::Received(_, frame) if frame == b"hello");
        assert_eq!(events.iter().filter(|e| hello(e)).count(), 1, "the honest client was heard");
        let honest_id = events.iter().find_map(|e| match e {
            ServerEvent::Received(id, frame) if frame == b"hello" => Some(*id),
            _ => None,
        });
        // It is still heard after the flooder has gone.
        honest.send(Channel::Reliable, b"again".to_vec());
        let mut heard_again = false;
        for _ in 0..2000 {
            let events = server.poll();
            assert!(!events.iter().any(|e| matches!(e, ServerEvent::Disconnected(id, _) if Some(*id) == honest_id)));
            heard_again |= events
                .iter()
                .any(|e| matches!(e, ServerEvent::Received(id, f) if Some(*id) == honest_id && f == b"again"));
            if heard_again {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(heard_again, "the honest client is heard after the flood");
    }

    /// A reason a peer closes with is its own text: it reaches the other side's log as one line of data, not as
    /// a forged line of its own.
    #[test]
    fn a_close_reason_with_a_forged_log_line_arrives_as_data() {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let identity = ServerIdentity::self_signed().unwrap();
        let pin = ServerTrust::Pinned(identity.fingerprint());
        let mut server = QuicServer::bind("127.0.0.1:0".parse().unwrap(), identity, runtime.handle()).unwrap();
        let addr = server.local_addr().unwrap();
        let mut client = runtime.block_on(QuicClient::connect(addr, &pin, Duration::from_secs(10))).unwrap();
        client.send(Channel::Reliable, b"hello".to_vec());
        let forged = "bye\n2026-01-01T00:00:00Z client 999 joined (from 203.0.113.7:4444)\u{1b}[2J";
        let mut said = None;
        for _ in 0..2000 {
            for event in server.poll() {
                match event {
                    ServerEvent::Received(..) => client.disconnect(forged),
                    ServerEvent::Disconnected(_, why) => said = Some(why),
                    _ => {}
                }
            }
            if said.is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let said = said.expect("the server hears the client go");
        assert!(crate::text::is_printable(&said), "{said:?}");
        assert!(said.starts_with("bye\\n2026-01-01T00:00:00Z client 999 joined"), "{said}");
    }
}
