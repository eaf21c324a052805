import { openCommentsForAgent } from '../client/comment-words.js';
import type { RpcClient } from '../client/rpc-client.js';

/** How long the prompt waits for the comments at most: a prompt is never held up for them. */
const COMMENTS_TIMEOUT_MS = 2000;

/**
 * The open review comments of `channel` as text for the agent's context,
 * or undefined when there are none, the session has none yet, or the
 * server does not answer within `timeoutMs` (a prompt never waits longer
 * nor fails for them; the reason goes to `log`).
 */
export async function openCommentsContext(
  client: RpcClient,
  channel: string,
  log: (line: string) => void,
  timeoutMs = COMMENTS_TIMEOUT_MS,
): Promise<string | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => {
      log(`${channel}: no review comments within ${timeoutMs} ms; the prompt goes on without them`);
      resolve(undefined);
    }, timeoutMs);
    timer.unref();
  });
  const listed = client.request('comments/list', { channel, state: 'open' }).then(
    ({ comments }) => {
      if (comments.length > 0) log(`${channel}: ${comments.length} open review comment${comments.length === 1 ? '' : 's'} handed to the agent`);
      return openCommentsForAgent(comments);
    },
    (error: unknown) => {
      log(`${channel}: review comments not read: ${(error as Error).message}`);
      return undefined;
    },
  );
  try {
    return await Promise.race([listed, late]);
  } finally {
    clearTimeout(timer);
  }
}
