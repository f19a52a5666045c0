import { Command, Redis } from 'ioredis';
import { AnswerWatch, type AnswerWatchEvents } from './answer-watch';
import type { Logger } from './logger';

// What ioredis says when Redis cannot be reached in time: retries used up, a late reply, a closed connection;
// and what a fail-fast connection says while Redis has stopped answering.
const UNAVAILABLE_MESSAGE =
  /^(Command timed out|Connection is closed\.|Stream isn't writeable|Reached the max retries per request limit|Redis is not answering)/;

/** What a client is told when its request needed Redis and Redis did not answer (GraphQL SERVICE_UNAVAILABLE, HTTP 503). */
export const REDIS_UNAVAILABLE_MESSAGE = 'Temporarily unavailable: Redis did not answer. Try again shortly.';

const NOT_ANSWERING_MESSAGE = 'Redis is not answering: the command was not sent (the connection waits for a PING to answer first)';

/** Whether a command was failed at once, unsent, because the connection had seen Redis stop answering (logged there once). */
export function isRefusedUnsent(error: unknown): boolean {
  return error instanceof Error && error.message === NOT_ANSWERING_MESSAGE;
}

/** Whether an error means Redis did not answer (as opposed to answering with an error). */
export function isRedisUnavailable(error: unknown): boolean {
  return error instanceof Error && (error.name === 'MaxRetriesPerRequestError' || UNAVAILABLE_MESSAGE.test(error.message));
}

export type FailFastOptions = AnswerWatchEvents & { logger: Logger };

/**
 * The request path's connection. Once a command goes unanswered (its reply later than the command timeout,
 * or the connection lost past its retries), every command fails at once, as unavailable, until Redis answers
 * again (a PING, or a reconnection's handshake); so while Redis hangs each request pays no timeout of its own:
 * those that can do without Redis (the rate limits) go on at once, the others fail at once. Pipelines and
 * transactions too.
 */
export class FailFastRedis extends Redis {
  private readonly availability: AnswerWatch;

  constructor(
    url: string,
    options: { maxRetriesPerRequest: number | null; enableReadyCheck: boolean; commandTimeout?: number },
    failFast: FailFastOptions,
  ) {
    super(url, options);
    this.availability = new AnswerWatch({
      ...failFast,
      ask: () => this.answersPing(),
      onChange: (answering, cause) => {
        if (answering) failFast.logger.info({ event: 'redis_answering' }, 'Redis answers again');
        else
          failFast.logger.warn(
            { event: 'redis_not_answering', err: cause },
            'Redis did not answer: the request connection fails at once until a PING answers',
          );
        failFast.onChange?.(answering, cause);
      },
    });
    this.once('end', () => this.availability.stop());
    // A reconnection whose handshake Redis answered is an answer too.
    this.on('ready', () => this.availability.answeredAgain());
  }

  /** False from a command that went unanswered until a PING answers. */
  get answering(): boolean {
    return this.availability.answering;
  }

  override sendCommand(command: Command, stream?: Parameters<Redis['sendCommand']>[1]): unknown {
    // A pipeline's or transaction's commands come here one after another in one synchronous loop (with the
    // pipeline's stream), so all of them are refused or none: the pipeline then settles with their errors.
    // A reconnection's own handshake (status `connect`: INFO for the ready check, CLIENT SETNAME, …) must go out,
    // or the connection could never come back.
    if (!this.availability.answering && this.status !== 'connect' && command.name !== 'quit') {
      this.availability.refused();
      command.reject(new Error(NOT_ANSWERING_MESSAGE));
      return command.promise;
    }
    const reply = super.sendCommand(command, stream);
    command.promise.catch((error: unknown) => {
      if (isRedisUnavailable(error) && this.status !== 'end') this.availability.stoppedAnswering(error);
    });
    return reply;
  }

  /** The probe: a PING past the refusal above. */
  private async answersPing(): Promise<boolean> {
    const ping = new Command('ping');
    super.sendCommand(ping);
    return ping.promise.then(
      () => true,
      () => false,
    );
  }
}
