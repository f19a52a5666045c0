import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import type { Logger } from './logger';

export type EventLoopMonitorOptions = {
  logger: Logger;
  /** A window whose worst delay is above this (ms) is logged as a warning, else at debug. Default 200. */
  warnMs?: number;
  /** Length of a window. Default 10,000 ms. */
  windowMs?: number;
};

/** Event-loop delay figures of one window, in milliseconds. */
export type EventLoopDelay = { p50: number; p99: number; max: number };

export type EventLoopMonitor = {
  /** The window so far. */
  current(): EventLoopDelay;
  stop(): void;
};

const ms = (nanoseconds: number) => Math.round(nanoseconds / 1e4) / 100;

function figures(histogram: IntervalHistogram): EventLoopDelay {
  return { p50: ms(histogram.percentile(50)), p99: ms(histogram.percentile(99)), max: ms(histogram.max) };
}

/**
 * Watches how late the event loop runs timers (perf_hooks' histogram, 20 ms resolution): a long
 * synchronous stretch anywhere in the process (a parse, a big JSON, an embedded-database query)
 * shows here first, as requests waiting. Logs each window's figures: a warning when it was bad.
 */
export function monitorEventLoop(options: EventLoopMonitorOptions): EventLoopMonitor {
  const warnMs = options.warnMs ?? 200;
  const histogram = monitorEventLoopDelay({ resolution: 20 });
  histogram.enable();
  const timer = setInterval(() => {
    const delay = figures(histogram);
    histogram.reset();
    if (delay.max > warnMs) options.logger.warn({ event: 'event_loop_delay', ...delay }, `the event loop was held up for ${delay.max} ms`);
    else options.logger.debug({ event: 'event_loop_delay', ...delay }, 'event loop delay');
  }, options.windowMs ?? 10_000);
  timer.unref();
  return {
    current: () => figures(histogram),
    stop: () => {
      clearInterval(timer);
      histogram.disable();
    },
  };
}
