import { api } from "./client";

/** A stored credential as the API shows it: never its secret, only a mask. */
export interface Credential {
  id: number;
  name: string;
  kind: string;
  mask: string;
  shared: boolean;
}

export const fetchCredentials = (signal?: AbortSignal) =>
  api.get<Credential[]>("/api/v1/credentials/", { signal });
