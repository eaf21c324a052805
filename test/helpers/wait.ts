/**
 * Resolves once `predicate` holds, polling every 5 ms; a predicate that
 * throws counts as not yet (a file being swapped is briefly absent).
 */
export async function until(predicate: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const holds = () => {
    try {
      return predicate();
    } catch {
      return false;
    }
  };
  while (!holds()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
