import { describe, expect, it } from 'vitest';
import { formatGoDuration, goDuration, parseDurationNanos } from './wire.js';

describe('Go durations', () => {
  it('are written as Go prints them', () => {
    const cases: Array<[string, string]> = [
      ['0', '0s'],
      ['0s', '0s'],
      ['250ns', '250ns'],
      ['1500ns', '1.5µs'],
      ['1ms', '1ms'],
      ['1.25ms', '1.25ms'],
      ['999ms', '999ms'],
      ['1s', '1s'],
      ['1.5s', '1.5s'],
      ['90s', '1m30s'],
      ['1h', '1h0m0s'],
      ['1h30m', '1h30m0s'],
      ['25h0.5s', '25h0m0.5s'],
      ['-1m', '-1m0s'],
      ['+2m', '2m0s'],
    ];
    for (const [text, written] of cases) expect(formatGoDuration(parseDurationNanos(text)!), text).toBe(written);
  });

  it('refuse what Go refuses, with its message', () => {
    for (const text of ['', '5', '1x', '5 minutes', 's']) {
      const parsed = goDuration().safeParse(text);
      expect(parsed.success, text).toBe(false);
      expect(parsed.error?.issues[0]?.message).toBe(`time: invalid duration ${JSON.stringify(text)}`);
    }
  });
});
