import {
  AbstractMessageReader,
  AbstractMessageWriter,
  type DataCallback,
  type Disposable,
  type Message,
  type MessageReader,
  type MessageWriter,
} from 'vscode-jsonrpc/node';

/**
 * `vscode-jsonrpc` reader over a WebSocket: the socket owner decodes each
 * text frame and pushes the message in with `deliver`.
 */
export class WsMessageReader extends AbstractMessageReader implements MessageReader {
  private callback: DataCallback | undefined;
  private readonly backlog: Message[] = [];

  listen(callback: DataCallback): Disposable {
    this.callback = callback;
    for (const message of this.backlog.splice(0)) callback(message);
    return {
      dispose: () => {
        this.callback = undefined;
      },
    };
  }

  /** Hands one decoded message to the JSON-RPC connection (buffered until it listens). */
  deliver(message: Message): void {
    if (this.callback) this.callback(message);
    else this.backlog.push(message);
  }

  /** Signals the end of the stream to the JSON-RPC connection. */
  end(): void {
    this.fireClose();
  }
}

/**
 * `vscode-jsonrpc` writer over a WebSocket: one message becomes one text
 * frame. Sending is delegated so the socket owner can order and bound it.
 */
export class WsMessageWriter extends AbstractMessageWriter implements MessageWriter {
  constructor(private readonly sink: (message: Message) => void) {
    super();
  }

  write(message: Message): Promise<void> {
    try {
      this.sink(message);
      return Promise.resolve();
    } catch (err) {
      this.fireError(err, message);
      return Promise.reject(err);
    }
  }

  end(): void {
    this.fireClose();
  }
}
