/**
 * The shapes of Cairn's public ids: the server checks them on every route, and the CLI checks
 * them before sending a request, so a mistyped id is a usage error with the same rule.
 */
export const ARTIFACT_ID = /^art_[A-Za-z0-9]{16}$/;
export const PAGE_SLUG = /^pg_[A-Za-z0-9]{16}$/;
export const LINK_ID = /^lnk_[A-Za-z0-9]{20}$/;
/** session_id and agent_id labels. */
export const LABEL = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
