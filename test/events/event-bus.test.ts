import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { EventBus } from '../../src/events/event-bus';
import { createLogger } from '../../src/logger';
import { TEST_REDIS_URL } from '../helpers/test-env';

describe('EventBus over Redis pub/sub', () => {
  const opened: Redis[] = [];
  const connect = () => {
    const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
    opened.push(redis);
    return redis;
  };
  const buses: EventBus[] = [];
  const newBus = () => {
    const bus = new EventBus({ redis: connect(), createSubscriber: connect, logger: createLogger('silent') });
    buses.push(bus);
    return bus;
  };
  afterEach(async () => {
    await Promise.all(buses.splice(0).map((bus) => bus.close()));
    for (const redis of opened.splice(0)) redis.disconnect();
  });
  const channel = () => `duotest:bus${randomBytes(4).toString('hex')}`;
  const nextEvent = (bus: EventBus, name: string) =>
    new Promise<{ received: Promise<unknown>; stop: () => Promise<void> }>((resolve, reject) => {
      let deliver: (payload: unknown) => void = () => undefined;
      const received = new Promise<unknown>((settle) => (deliver = settle));
      bus.listen(name, (payload) => deliver(payload)).then((stop) => resolve({ received, stop }), reject);
    });

  it('resolves a second listen on a channel only once the first one’s SUBSCRIBE is confirmed', async () => {
    const bus = newBus();
    const name = channel();
    // Both listens start in the same turn, while the subscriber connection is still being opened.
    const first = nextEvent(bus, name);
    const second = await nextEvent(bus, name);
    await bus.publish(name, { n: 1 });
    await expect(second.received).resolves.toEqual({ n: 1 });
    await expect((await first).received).resolves.toEqual({ n: 1 });
  });

  it('keeps the channel while one listener stays, and lets a new listen subscribe again after the last one left', async () => {
    const bus = newBus();
    const name = channel();
    const [one, two] = await Promise.all([nextEvent(bus, name), nextEvent(bus, name)]);
    await one.stop();
    await bus.publish(name, 'still');
    await expect(two.received).resolves.toBe('still');
    await two.stop();
    const three = await nextEvent(bus, name);
    await bus.publish(name, 'again');
    await expect(three.received).resolves.toBe('again');
  });
});
