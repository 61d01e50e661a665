/** A mistake in how the command was called: printed plainly, exit code 2. */
export class UsageError extends Error {}
