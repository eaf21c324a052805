/**
 * Chat channel commands. The subset we serve has none: turns come from the
 * harness, and a chat is read through `subscribe`.
 */

/** Chat-scoped methods AHP defines that are outside the subset typed here. */
export const UntypedChatMethods = ['createChat', 'fetchTurns', 'completions'] as const;
