import { httpError, MAX_REASON_CHARS, parseRetryAfter, safeReason } from '../../src/llm/provider-errors';

describe('parseRetryAfter', () => {
  const now = Date.parse('Wed, 21 Oct 2015 07:28:00 GMT');

  it.each([
    ['1', 1000],
    ['0', 0],
    [' 2 ', 2000],
    ['1.5', 1500],
    ['Wed, 21 Oct 2015 07:28:03 GMT', 3000],
    ['Wed, 21 Oct 2015 07:27:00 GMT', 0],
    ['soon', undefined],
    ['-1', undefined],
    ['', undefined],
    [null, undefined],
  ])('reads %p as %p ms', (value, expected) => {
    expect(parseRetryAfter(value, now)).toBe(expected);
  });
});

describe('safeReason', () => {
  it('collapses whitespace, redacts the secret and cuts long text', () => {
    const reason = safeReason(`bad key  sk-secret-1\n${'x'.repeat(1000)}`, 'sk-secret-1');
    expect(reason.startsWith('bad key [redacted] xxx')).toBe(true);
    expect(reason).not.toContain('sk-secret-1');
    expect(reason).toHaveLength(MAX_REASON_CHARS + 1);
  });
});

describe('httpError', () => {
  const headers = (values: Record<string, string> = {}) => new Headers(values);

  it.each([
    [400, '{"error":{"message":"maximum context length is 8192 tokens","code":"context_length_exceeded"}}', 'prompt_too_long'],
    [
      400,
      '{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 250000 tokens > 200000 maximum"}}',
      'prompt_too_long',
    ],
    [
      413,
      '{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of bytes."}}',
      'prompt_too_long',
    ],
    [400, '{"error":{"message":"messages: field required"}}', 'http'],
    [500, '{"error":{"message":"prompt is too long"}}', 'http'],
  ])('maps HTTP %p with body %s to kind %p', (status, bodyText, kind) => {
    expect(httpError({ providerName: 'p', status, headers: headers(), bodyText }).kind).toBe(kind);
  });

  it('quotes the provider message, not the whole body', () => {
    const error = httpError({
      providerName: 'openai',
      status: 401,
      headers: headers(),
      bodyText: '{"error":{"message":"Incorrect API key","type":"auth"}}',
    });
    expect(error.message).toBe('openai answered HTTP 401: Incorrect API key');
  });

  it('prefers retry-after-ms to retry-after', () => {
    expect(
      httpError({ providerName: 'p', status: 429, headers: headers({ 'retry-after-ms': '250', 'retry-after': '1' }), bodyText: '' })
        .retryAfterMs,
    ).toBe(250);
    expect(httpError({ providerName: 'p', status: 429, headers: headers({ 'retry-after': '1' }), bodyText: '' }).retryAfterMs).toBe(1000);
  });
});
