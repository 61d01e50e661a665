/** A hosted MCP grant's permission tier, as the consent screen offers them. */
export type GrantTier = 'read' | 'write' | 'destroy';

/**
 * The consent screen's nested permission tiers and their scope names. A tier includes every tier
 * before it. The names appear in the token response and in insufficient_scope errors; the OAuth
 * `scope` request parameter itself only takes `openid` (spec).
 */
export const TIERS: readonly GrantTier[] = ['read', 'write', 'destroy'];

export const SCOPE_OF: Record<GrantTier, string> = {
  read: 'artifacts:read',
  write: 'artifacts:write',
  destroy: 'artifacts:destroy',
};

export const TIER_LABEL: Record<GrantTier, string> = { read: 'Read', write: 'Write', destroy: 'Destroy' };

/** Whether a grant of tier `granted` covers something that needs tier `needed`. */
export function tierCovers(granted: GrantTier, needed: GrantTier): boolean {
  return TIERS.indexOf(granted) >= TIERS.indexOf(needed);
}

export function isTier(value: unknown): value is GrantTier {
  return value === 'read' || value === 'write' || value === 'destroy';
}
