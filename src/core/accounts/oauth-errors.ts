/**
 * OAuth protocol errors (RFC 6749 §5.2, RFC 7591 §3.2.2, RFC 8707). The OAuth endpoints answer
 * with the RFC's `{error, error_description}` body, not Cairn's envelope, because OAuth clients
 * parse that shape; the authorization endpoint sends them back on the redirect URI instead.
 */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'invalid_scope'
  | 'invalid_target'
  | 'access_denied'
  | 'invalid_redirect_uri'
  | 'invalid_client_metadata'
  | 'server_error'
  | 'temporarily_unavailable';

export class OAuthError extends Error {
  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
    readonly status = 400,
  ) {
    super(description);
    this.name = 'OAuthError';
  }

  toJSON(): { error: OAuthErrorCode; error_description: string } {
    return { error: this.error, error_description: this.description };
  }
}
