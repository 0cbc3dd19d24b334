import { connect } from 'node:net';

/** Sends one command as RESP and returns its first reply line/bulk as text (errors reject). */
export function redisCommand(host: string, port: number, args: string[], timeoutMs = 2000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    let buffer = '';
    const finish = (error: Error | null, value?: string) => {
      socket.destroy();
      if (error) reject(error);
      else resolve(value ?? '');
    };
    socket.setTimeout(timeoutMs, () => finish(new Error(`redis ${host}:${port} timed out`)));
    socket.on('error', (error) => finish(error));
    socket.on('data', (chunk) => {
      buffer += chunk.toString('utf8');
      const lineEnd = buffer.indexOf('\r\n');
      if (lineEnd < 0) return;
      const head = buffer.slice(0, lineEnd);
      if (head.startsWith('-')) return finish(new Error(head.slice(1)));
      if (head.startsWith('+') || head.startsWith(':')) return finish(null, head.slice(1));
      if (head.startsWith('$')) {
        const length = Number(head.slice(1));
        if (length < 0) return finish(null, '');
        const body = Buffer.from(buffer.slice(lineEnd + 2), 'utf8');
        if (body.length >= length + 2) finish(null, body.subarray(0, length).toString('utf8'));
        return;
      }
      finish(new Error(`unexpected reply ${head}`));
    });
    const payload = `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`;
    socket.write(payload);
  });
}
