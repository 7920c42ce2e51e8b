/**
 * Domain errors carry an HTTP status and a stable snake_case code; the API's error middleware
 * renders them as {detail, code, ...extra}. Codes survive process boundaries, `instanceof` does not.
 */
export class DomainError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
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

/** 422 with the validation-error shape `{detail: [{loc, msg, type}]}`. */
export class ValidationFailed extends Error {
  readonly status = 422;
  readonly code = 'validation_error';
  constructor(readonly errors: FieldError[]) {
    super(errors.map((e) => `${e.loc.join('.')}: ${e.msg}`).join('; '));
  }
}

export const notFound = (what: string, code = 'not_found') => new DomainError(404, code, `${what} not found`);
export const forbidden = (detail = 'You are not allowed to do this', code = 'forbidden') => new DomainError(403, code, detail);
export const conflict = (detail: string, code = 'conflict') => new DomainError(409, code, detail);
