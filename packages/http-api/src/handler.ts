import { DomainError } from '@mesh/model';
import type { Request, Response } from 'express';
import { sendDomainError, type Operation } from './errors.js';
import type { Handler, Params } from './route-table.js';

/** Runs a handler; domain errors become the standard body titled by `operation`. */
export function withOperation(operation: Operation, handler: (req: Request, res: Response, params: Params) => Promise<void> | void): Handler {
  return async (req, res, params) => {
    try {
      await handler(req, res, params);
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      sendDomainError(res, operation, error);
    }
  };
}
