import type { CodeWithStatus, ErrorCode, StatusOf } from './error-codes.ts';

export type { CodeWithStatus, ErrorCode } from './error-codes.ts';

/**
 * Domain errors carry an HTTP status and a stable snake_case code from the registry
 * (`error-codes.ts`: tsc refuses a code that is not listed, or a status that is not the code's);
 * the API's error middleware renders them as {detail, code, request_id, ...extra}. Codes survive
 * process boundaries, `instanceof` does not.
 */
export class DomainError<C extends ErrorCode = ErrorCode> extends Error {
  constructor(
    readonly status: StatusOf<C>,
    readonly code: C,
    detail: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(detail);
  }
}

export interface FieldError {
  loc: Array<string | number>;
  msg: string;
  type: string;
}

/** 422 with the validation-error shape `{detail: [{loc, msg, type}], code: "validation_failed"}`. */
export class ValidationFailed extends Error {
  readonly status = 422;
  readonly code = 'validation_failed' satisfies ErrorCode;
  constructor(readonly errors: FieldError[]) {
    super(errors.map((e) => `${e.loc.join('.')}: ${e.msg}`).join('; '));
  }
}

export const notFound = (what: string, code: CodeWithStatus<404> = 'not_found') => new DomainError(404, code, `${what} not found`);
export const forbidden = (detail = 'You are not allowed to do this', code: CodeWithStatus<403> = 'forbidden') => new DomainError(403, code, detail);
export const conflict = (detail: string, code: CodeWithStatus<409> = 'conflict') => new DomainError(409, code, detail);
