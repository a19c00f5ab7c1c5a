import { mount } from '@vue/test-utils';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../api/client.js';
import LoadState from './LoadState.vue';

const refusal = (status: number) =>
  new ApiError(status, { type: '/std-errors', status, title: 'Access Denied', detail: status === 401 ? 'Unauthenticated' : 'access denied', details: 'x' });

const render = (props: { loading: boolean; error: Error | undefined }) =>
  mount(LoadState, { props, global: { stubs: { RouterLink: { props: ['to'], template: '<a :data-to="JSON.stringify(to)"><slot /></a>' } } } });

describe('the loading state of a page', () => {
  it('says it is loading, then nothing once loaded', () => {
    expect(render({ loading: true, error: undefined }).text()).toBe('Loading…');
    expect(render({ loading: false, error: undefined }).text()).toBe('');
  });

  it("shows the API's error as an alert", () => {
    const shown = render({ loading: false, error: new ApiError(503, undefined) });
    expect(shown.get('[role="alert"]').text()).toBe('Could not load: the API answered 503');
    expect(shown.find('a').exists()).toBe(false);
  });

  it('leads to the sign-in page when the credentials are refused (401) or fall short (403)', () => {
    const expired = render({ loading: false, error: refusal(401) });
    expect(expired.text()).toContain('Could not load: Unauthenticated');
    expect(expired.get('a').text()).toBe('Sign in again');
    expect(expired.get('a').attributes('data-to')).toBe('{"name":"sign-in"}');
    const forbidden = render({ loading: false, error: refusal(403) });
    expect(forbidden.text()).toContain('You may not see this.');
    expect(forbidden.get('a').text()).toBe('Sign in');
  });
});
