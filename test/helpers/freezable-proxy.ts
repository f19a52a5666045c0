import net from 'node:net';

/**
 * A TCP proxy to a server that can stop passing bytes (both ways, connections left open, as a hung server or a
 * network that drops everything) and pass them on later in order, or close for good (connections refused).
 */
export type FreezableProxy = {
  port: number;
  /** Holds every byte from now on, on open and new connections alike. */
  freeze(): void;
  /** Passes on what was held, in order, and everything after it. */
  thaw(): void;
  /** Stops listening and ends every connection: connecting is refused from now on. */
  close(): Promise<void>;
};

export async function startFreezableProxy(target: { host: string; port: number }): Promise<FreezableProxy> {
  let frozen = false;
  const held: Array<() => void> = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    }
    const pass = (from: net.Socket, to: net.Socket) =>
      from.on('data', (data) => {
        if (frozen) held.push(() => to.write(data));
        else to.write(data);
      });
    pass(client, upstream);
    pass(upstream, client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    freeze: () => {
      frozen = true;
    },
    thaw: () => {
      frozen = false;
      for (const write of held.splice(0)) write();
    },
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
