// Builds multipart/form-data bodies for uploads through app.inject().
import { randomBytes } from 'node:crypto';

export interface FilePart {
  name?: string;
  filename: string;
  contentType?: string;
  data: Buffer;
}

/** Text fields, then the file, then `fieldsAfter` (to test what happens once the file is stored). */
export function multipartBody(
  fields: Record<string, string>,
  file?: FilePart,
  fieldsAfter: Record<string, string> = {},
): { payload: Buffer; headers: Record<string, string> } {
  const boundary = `----folio${randomBytes(8).toString('hex')}`;
  const chunks: Buffer[] = [];
  const addFields = (list: Record<string, string>) => {
    for (const [name, value] of Object.entries(list)) {
      chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
    }
  };
  addFields(fields);
  if (file) {
    chunks.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${file.name ?? 'file'}"; filename="${file.filename}"\r\n` +
          `Content-Type: ${file.contentType ?? 'application/octet-stream'}\r\n\r\n`,
      ),
      file.data,
      Buffer.from('\r\n'),
    );
  }
  addFields(fieldsAfter);
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(chunks), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}
