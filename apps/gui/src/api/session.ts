// The signed-in user's token (docs/gui.md, Signing in): kept in session storage, so it lives as
// long as the tab and is never written to disk, and sent as `Authorization: Bearer`.
import { ref } from 'vue';

const TOKEN_KEY = 'mesh.userToken';

function storedToken(): string | undefined {
  try {
    return sessionStorage.getItem(TOKEN_KEY) ?? undefined;
  } catch {
    return undefined;
  }
}

/** The token in use; undefined when signed out (a loopback caller is then admin without one). */
export const token = ref<string | undefined>(storedToken());

export function signIn(userToken: string): void {
  sessionStorage.setItem(TOKEN_KEY, userToken);
  token.value = userToken;
}

export function signOut(): void {
  sessionStorage.removeItem(TOKEN_KEY);
  token.value = undefined;
}
