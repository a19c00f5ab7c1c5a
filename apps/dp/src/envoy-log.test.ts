import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { decodeGrpcMessage, passOnLines, RefusalReporter, streamRefusalOf } from './envoy-log.js';
import type { Level } from './log.js';

// Lines as Envoy 1.40 writes them.
const WRONG_NAME =
  '[2026-11-27 14:52:57.864][10615][warning][config] [./source/extensions/config_subscription/grpc/grpc_stream.h:189] StreamAggregatedResources gRPC config stream to ads_cluster closed: 2, authentication%20failed:%20proxy%20name%20from%20requestor:%20web-1%20is%20different%20than%20in%20token:%20other{via_upstream}';
const DELTA_WRONG_NAME = WRONG_NAME.replace('StreamAggregatedResources', 'DeltaAggregatedResources');
const UNPARSABLE =
  '[2026-11-27 14:58:42.815][19837][warning][config] [./source/extensions/config_subscription/grpc/grpc_stream.h:189] StreamAggregatedResources gRPC config stream to ads_cluster closed: 2, authentication%20failed:%20could%20not%20parse%20the%20token{via_upstream}';
const CONTROL_PLANE_STOPPED =
  '[2026-11-27 14:55:27.342][14941][warning][config] [./source/extensions/config_subscription/grpc/grpc_stream.h:189] StreamAggregatedResources gRPC config stream to ads_cluster closed: 13, upstream_reset_after_response_started{connection_termination}';
const CONTROL_PLANE_AWAY =
  '[2026-11-27 14:55:58.025][14941][warning][config] [./source/extensions/config_subscription/grpc/grpc_stream.h:227] StreamAggregatedResources gRPC config stream to ads_cluster closed since 30s ago: 14, upstream connect error or disconnect/reset before headers. reset reason: remote connection failure{upstream_reset_before_response_started{remote_connection_failure|delayed_connect_error:_Connection_refused}}';

function recorder() {
  const lines: Array<{ level: Level; message: string; details?: Record<string, unknown> }> = [];
  return { lines, log: (level: Level, message: string, details?: Record<string, unknown>) => lines.push({ level, message, details }) };
}

describe("mesh-dp's reading of Envoy's log", () => {
  it("finds the control plane's refusal of the xDS stream, decoded, on either xDS variant", () => {
    const reason = 'authentication failed: proxy name from requestor: web-1 is different than in token: other';
    expect(streamRefusalOf(WRONG_NAME)).toEqual({ stream: 'StreamAggregatedResources', grpcStatus: 2, reason });
    expect(streamRefusalOf(DELTA_WRONG_NAME)).toEqual({ stream: 'DeltaAggregatedResources', grpcStatus: 2, reason });
  });

  it('takes a lost or unreachable control plane, and other lines, for no refusal', () => {
    expect(streamRefusalOf(CONTROL_PLANE_STOPPED)).toBeUndefined();
    expect(streamRefusalOf(CONTROL_PLANE_AWAY)).toBeUndefined();
    expect(streamRefusalOf('[2026-11-27 14:52:57.814][10615][info][main] [source/server/server.cc:1098] starting main dispatch loop')).toBeUndefined();
  });

  it('decodes percent-encoded UTF-8 and leaves a stray percent sign as it is', () => {
    expect(decodeGrpcMessage('caf%C3%A9%20%E2%9C%93')).toBe('café ✓');
    expect(decodeGrpcMessage('100% sure, 50%zz')).toBe('100% sure, 50%zz');
  });

  it('logs a refusal once at error level, a different one at once, and one that keeps coming again after a minute with its count', () => {
    const { lines, log } = recorder();
    let now = 0;
    const reporter = new RefusalReporter(log, () => now);
    for (let i = 0; i < 5; i++) reporter.line(WRONG_NAME);
    reporter.line(CONTROL_PLANE_STOPPED);
    expect(lines).toEqual([
      {
        level: 'error',
        message: "the control plane refused Envoy's configuration stream: authentication failed: proxy name from requestor: web-1 is different than in token: other",
        details: { grpcStatus: 2, stream: 'StreamAggregatedResources' },
      },
    ]);
    reporter.line(UNPARSABLE);
    expect(lines[1]?.message).toBe("the control plane refused Envoy's configuration stream: authentication failed: could not parse the token");
    for (let i = 0; i < 3; i++) reporter.line(UNPARSABLE);
    now += 60_000;
    reporter.line(UNPARSABLE);
    expect(lines).toHaveLength(3);
    expect(lines[2]).toMatchObject({ level: 'error', details: { refusedAgain: 3 } });
  });

  it('passes every byte on and hands over lines whole, however the chunks split them', () => {
    const source = new PassThrough();
    const sink = new PassThrough();
    let passed = '';
    sink.on('data', (chunk: Buffer) => (passed += chunk.toString()));
    const lines: string[] = [];
    passOnLines(source, sink, (line) => lines.push(line));
    const text = `${WRONG_NAME}\n${CONTROL_PLANE_STOPPED}\npartial`;
    for (let i = 0; i < text.length; i += 37) source.write(text.slice(i, i + 37));
    source.end();
    return new Promise<void>((resolve) =>
      source.on('end', () => {
        expect(passed).toBe(text);
        expect(lines).toEqual([WRONG_NAME, CONTROL_PLANE_STOPPED]);
        resolve();
      }),
    );
  });
});
