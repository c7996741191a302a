// Schema annotations the validator reads, kept apart from the validator (validation.ts) so that
// declaring a schema does not load TypeBox's compiler: the client library loads the schemas
// (shared/schemas.ts) and must stay light to import.

/**
 * An annotation for a field whose every wrong value — a wrong JSON type included — is a value
 * error (400), because the contract says so: `{[ANY_WRONG_VALUE_IS_400]: true}` among the field's
 * schema options. The shape pass then accepts any JSON value there and the full pass judges it.
 * A symbol key, so it never appears in the OpenAPI document or the MCP tool schemas.
 */
export const ANY_WRONG_VALUE_IS_400: unique symbol = Symbol('memory-runtime.anyWrongValueIs400');
