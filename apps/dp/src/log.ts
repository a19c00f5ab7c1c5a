// mesh-dp's own log: one JSON object a line on stderr, beside Envoy's lines that it passes on.

export type Level = 'info' | 'error';

export type Logger = (level: Level, message: string, details?: Record<string, unknown>) => void;

export const log: Logger = (level, message, details = {}) =>
  process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level, logger: 'mesh-dp', msg: message, ...details })}\n`);
