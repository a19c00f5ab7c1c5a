// Schema pieces shared by several kinds.
import { z } from 'zod';
import { bytesValue, list, message, stringMap } from '../wire.js';

/** `{match: {tag: value}}` */
export const SelectorSchema = message({ match: stringMap() });
export type Selector = z.infer<typeof SelectorSchema>;

export const selectorList = () => list(SelectorSchema);

/** A data source of TLS material: a secret name, inline base64 bytes, an inline string or a file. */
export const DataSourceSchema = message({
  secret: z.string().optional(),
  inline: bytesValue(),
  inlineString: z.string().optional(),
  file: z.string().optional(),
});
export type DataSource = z.infer<typeof DataSourceSchema>;
