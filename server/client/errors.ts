/** A command-line mistake; exits with code 2 after printing the usage. */
export class UsageError extends Error {}

/** A command's failure to print (exit code 1). */
export class CommandError extends Error {}
