import type { Socket } from 'node:net';

/** How long a closing connection keeps reading (and dropping) what its peer still sends, at most. */
export const LINGER_MS = 2000;

const closing = new WeakSet<Socket>();

/** Whether {@link closeGracefully} has been called on `socket`. */
export function isClosing(socket: Socket): boolean {
  return closing.has(socket);
}

/**
 * Ends a connection after its last answer without losing that answer, as
 * Go's server does after a 431 or an unread body (close the write side,
 * linger, then close): the FIN (after TLS close_notify) follows the
 * answer once it is flushed, and whatever the peer still sends is read
 * and dropped until the peer closes or LINGER_MS pass, then the socket is
 * destroyed. Closing a socket with unread request bytes makes the kernel
 * answer with a reset, and a peer still sending its request then loses
 * the answer it was about to read. Nothing read after this is parsed as
 * a request by Plinth. Idempotent; never throws.
 */
export function closeGracefully(socket: Socket): void {
  if (socket.destroyed || closing.has(socket)) return;
  closing.add(socket);
  socket.on('error', () => socket.destroy());
  socket.on('data', () => undefined);
  socket.end();
  socket.resume();
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}
