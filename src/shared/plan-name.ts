/**
 * The plans a tenant can be on. Shared by the core (which owns each plan's limits, core/plans.ts)
 * and the metadata ports and adapters (which store the name): ports import nothing from the core.
 */
export type PlanName = 'free' | 'pro';
