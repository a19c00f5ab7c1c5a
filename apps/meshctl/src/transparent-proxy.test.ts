import { describe, expect, it } from 'vitest';
import { buildRules, DEFAULT_SETTINGS, nameServersOf, removalInput, renderRestoreInput, type RedirectSettings } from './transparent-proxy.js';

const rules = (settings: Partial<RedirectSettings>, family: 4 | 6 = 4, nameServers: string[] = []) => renderRestoreInput(buildRules({ ...DEFAULT_SETTINGS, uid: 5678, ...settings }, family, nameServers));

const lines = (...text: string[]) => `${text.join('\n')}\n`;
const CHAINS = ['-N MESH_INBOUND', '-N MESH_OUTBOUND', '-N MESH_INBOUND_REDIRECT', '-N MESH_OUTBOUND_REDIRECT'];
const MARK = '-m comment --comment mesh/transparent-proxy';

describe('the iptables rules of the transparent proxy', () => {
  it("redirects inbound TCP to 15006 and outbound TCP to 15001, all but the proxy user's own and loopback's", () => {
    expect(rules({})).toBe(
      lines(
        '*nat',
        ...CHAINS,
        `-A PREROUTING -p tcp ${MARK} -j MESH_INBOUND`,
        `-A OUTPUT -p tcp ${MARK} -j MESH_OUTBOUND`,
        '-A MESH_INBOUND -p tcp -j MESH_INBOUND_REDIRECT',
        '-A MESH_OUTBOUND -s 127.0.0.6/32 -o lo -j RETURN',
        '-A MESH_OUTBOUND -p tcp -o lo ! -d 127.0.0.1/32 -m owner --uid-owner 5678 -j MESH_INBOUND_REDIRECT',
        '-A MESH_OUTBOUND -p tcp -o lo -m owner ! --uid-owner 5678 -j RETURN',
        '-A MESH_OUTBOUND -m owner --uid-owner 5678 -j RETURN',
        '-A MESH_OUTBOUND -d 127.0.0.1/32 -j RETURN',
        '-A MESH_OUTBOUND -j MESH_OUTBOUND_REDIRECT',
        '-A MESH_INBOUND_REDIRECT -p tcp -j REDIRECT --to-ports 15006',
        '-A MESH_OUTBOUND_REDIRECT -p tcp -j REDIRECT --to-ports 15001',
        'COMMIT',
      ),
    );
  });

  it('leaves excluded ports alone and redirects to the ports it is given', () => {
    expect(rules({ outboundPort: 12345, inboundPort: 12346, excludeInboundPorts: [22, 443], excludeOutboundPorts: [5432] })).toBe(
      lines(
        '*nat',
        ...CHAINS,
        `-A PREROUTING -p tcp ${MARK} -j MESH_INBOUND`,
        `-A OUTPUT -p tcp ${MARK} -j MESH_OUTBOUND`,
        '-A MESH_INBOUND -p tcp --dport 22 -j RETURN',
        '-A MESH_INBOUND -p tcp --dport 443 -j RETURN',
        '-A MESH_INBOUND -p tcp -j MESH_INBOUND_REDIRECT',
        '-A MESH_OUTBOUND -p tcp --dport 5432 -j RETURN',
        '-A MESH_OUTBOUND -s 127.0.0.6/32 -o lo -j RETURN',
        '-A MESH_OUTBOUND -p tcp -o lo ! -d 127.0.0.1/32 -m owner --uid-owner 5678 -j MESH_INBOUND_REDIRECT',
        '-A MESH_OUTBOUND -p tcp -o lo -m owner ! --uid-owner 5678 -j RETURN',
        '-A MESH_OUTBOUND -m owner --uid-owner 5678 -j RETURN',
        '-A MESH_OUTBOUND -d 127.0.0.1/32 -j RETURN',
        '-A MESH_OUTBOUND -j MESH_OUTBOUND_REDIRECT',
        '-A MESH_INBOUND_REDIRECT -p tcp -j REDIRECT --to-ports 12346',
        '-A MESH_OUTBOUND_REDIRECT -p tcp -j REDIRECT --to-ports 12345',
        'COMMIT',
      ),
    );
  });

  it("sends DNS to the resolv.conf name servers to mesh-dp's resolver, the resolver's own queries out, each in its conntrack zone", () => {
    expect(rules({ dns: 'name-servers' }, 4, ['10.0.0.53', '10.0.0.54'])).toBe(
      lines(
        '*raw',
        `-A OUTPUT -p udp --dport 53 -m owner --uid-owner 5678 ${MARK} -j CT --zone 1`,
        `-A OUTPUT -p udp --sport 15053 -m owner --uid-owner 5678 ${MARK} -j CT --zone 2`,
        `-A OUTPUT -d 10.0.0.53 -p udp --dport 53 ${MARK} -j CT --zone 2`,
        `-A OUTPUT -d 10.0.0.54 -p udp --dport 53 ${MARK} -j CT --zone 2`,
        `-A PREROUTING -s 10.0.0.53 -p udp --sport 53 ${MARK} -j CT --zone 1`,
        `-A PREROUTING -s 10.0.0.54 -p udp --sport 53 ${MARK} -j CT --zone 1`,
        'COMMIT',
        '*nat',
        ...CHAINS,
        `-A PREROUTING -p tcp ${MARK} -j MESH_INBOUND`,
        `-I OUTPUT 1 -p udp --dport 53 -m owner --uid-owner 5678 ${MARK} -j RETURN`,
        `-I OUTPUT 2 -d 10.0.0.53 -p udp --dport 53 ${MARK} -j REDIRECT --to-ports 15053`,
        `-I OUTPUT 3 -d 10.0.0.54 -p udp --dport 53 ${MARK} -j REDIRECT --to-ports 15053`,
        `-A OUTPUT -p tcp ${MARK} -j MESH_OUTBOUND`,
        '-A MESH_INBOUND -p tcp -j MESH_INBOUND_REDIRECT',
        '-A MESH_OUTBOUND -s 127.0.0.6/32 -o lo -j RETURN',
        '-A MESH_OUTBOUND -p tcp ! --dport 53 -o lo ! -d 127.0.0.1/32 -m owner --uid-owner 5678 -j MESH_INBOUND_REDIRECT',
        '-A MESH_OUTBOUND -p tcp ! --dport 53 -o lo -m owner ! --uid-owner 5678 -j RETURN',
        '-A MESH_OUTBOUND -m owner --uid-owner 5678 -j RETURN',
        '-A MESH_OUTBOUND -d 10.0.0.53 -p tcp --dport 53 -j REDIRECT --to-ports 15053',
        '-A MESH_OUTBOUND -d 10.0.0.54 -p tcp --dport 53 -j REDIRECT --to-ports 15053',
        '-A MESH_OUTBOUND -d 127.0.0.1/32 -j RETURN',
        '-A MESH_OUTBOUND -j MESH_OUTBOUND_REDIRECT',
        '-A MESH_INBOUND_REDIRECT -p tcp -j REDIRECT --to-ports 15006',
        '-A MESH_OUTBOUND_REDIRECT -p tcp -j REDIRECT --to-ports 15001',
        'COMMIT',
      ),
    );
  });

  it('sends every DNS query to the resolver on the port it is given, without conntrack zones when told so', () => {
    expect(rules({ dns: 'all', dnsPort: 5353, dnsConntrackZoneSplit: false }, 4, ['10.0.0.53'])).toBe(
      lines(
        '*nat',
        ...CHAINS,
        `-A PREROUTING -p tcp ${MARK} -j MESH_INBOUND`,
        `-I OUTPUT 1 -p udp --dport 53 -m owner --uid-owner 5678 ${MARK} -j RETURN`,
        `-I OUTPUT 2 -p udp --dport 53 ${MARK} -j REDIRECT --to-ports 5353`,
        `-A OUTPUT -p tcp ${MARK} -j MESH_OUTBOUND`,
        '-A MESH_INBOUND -p tcp -j MESH_INBOUND_REDIRECT',
        '-A MESH_OUTBOUND -s 127.0.0.6/32 -o lo -j RETURN',
        '-A MESH_OUTBOUND -p tcp ! --dport 53 -o lo ! -d 127.0.0.1/32 -m owner --uid-owner 5678 -j MESH_INBOUND_REDIRECT',
        '-A MESH_OUTBOUND -p tcp ! --dport 53 -o lo -m owner ! --uid-owner 5678 -j RETURN',
        '-A MESH_OUTBOUND -m owner --uid-owner 5678 -j RETURN',
        '-A MESH_OUTBOUND -p tcp --dport 53 -j REDIRECT --to-ports 5353',
        '-A MESH_OUTBOUND -d 127.0.0.1/32 -j RETURN',
        '-A MESH_OUTBOUND -j MESH_OUTBOUND_REDIRECT',
        '-A MESH_INBOUND_REDIRECT -p tcp -j REDIRECT --to-ports 15006',
        '-A MESH_OUTBOUND_REDIRECT -p tcp -j REDIRECT --to-ports 15001',
        'COMMIT',
      ),
    );
  });

  it("gives IPv6 its loopback, its pass-through source and its inbound port", () => {
    expect(rules({ dns: 'name-servers' }, 6, ['fd00::53'])).toBe(
      lines(
        '*raw',
        `-A OUTPUT -p udp --dport 53 -m owner --uid-owner 5678 ${MARK} -j CT --zone 1`,
        `-A OUTPUT -p udp --sport 15053 -m owner --uid-owner 5678 ${MARK} -j CT --zone 2`,
        `-A OUTPUT -d fd00::53 -p udp --dport 53 ${MARK} -j CT --zone 2`,
        `-A PREROUTING -s fd00::53 -p udp --sport 53 ${MARK} -j CT --zone 1`,
        'COMMIT',
        '*nat',
        ...CHAINS,
        `-A PREROUTING -p tcp ${MARK} -j MESH_INBOUND`,
        `-I OUTPUT 1 -p udp --dport 53 -m owner --uid-owner 5678 ${MARK} -j RETURN`,
        `-I OUTPUT 2 -d fd00::53 -p udp --dport 53 ${MARK} -j REDIRECT --to-ports 15053`,
        `-A OUTPUT -p tcp ${MARK} -j MESH_OUTBOUND`,
        '-A MESH_INBOUND -p tcp -j MESH_INBOUND_REDIRECT',
        '-A MESH_OUTBOUND -s ::6/128 -o lo -j RETURN',
        '-A MESH_OUTBOUND -p tcp ! --dport 53 -o lo ! -d ::1/128 -m owner --uid-owner 5678 -j MESH_INBOUND_REDIRECT',
        '-A MESH_OUTBOUND -p tcp ! --dport 53 -o lo -m owner ! --uid-owner 5678 -j RETURN',
        '-A MESH_OUTBOUND -m owner --uid-owner 5678 -j RETURN',
        '-A MESH_OUTBOUND -d fd00::53 -p tcp --dport 53 -j REDIRECT --to-ports 15053',
        '-A MESH_OUTBOUND -d ::1/128 -j RETURN',
        '-A MESH_OUTBOUND -j MESH_OUTBOUND_REDIRECT',
        '-A MESH_INBOUND_REDIRECT -p tcp -j REDIRECT --to-ports 15010',
        '-A MESH_OUTBOUND_REDIRECT -p tcp -j REDIRECT --to-ports 15001',
        'COMMIT',
      ),
    );
  });
});

describe('removing the transparent proxy', () => {
  // `iptables-save` of a host with the rules installed beside rules of others.
  const saved = lines(
    '# Generated by iptables-save v1.8.9 (nf_tables)',
    '*filter',
    ':INPUT ACCEPT [0:0]',
    '-A INPUT -p tcp -m tcp --dport 22 -j ACCEPT',
    'COMMIT',
    '*raw',
    ':PREROUTING ACCEPT [0:0]',
    ':OUTPUT ACCEPT [0:0]',
    '-A PREROUTING -s 10.0.0.53/32 -p udp -m udp --sport 53 -m comment --comment "mesh/transparent-proxy" -j CT --zone 1',
    '-A OUTPUT -p udp -m udp --dport 53 -m owner --uid-owner 5678 -m comment --comment "mesh/transparent-proxy" -j CT --zone 1',
    '-A OUTPUT -p udp -m udp --dport 53 -m comment --comment "mesh/transparent-proxy-other" -j CT --zone 3',
    'COMMIT',
    '*nat',
    ':PREROUTING ACCEPT [0:0]',
    ':OUTPUT ACCEPT [0:0]',
    ':DOCKER - [0:0]',
    ':MESH_INBOUND - [0:0]',
    ':MESH_INBOUND_REDIRECT - [0:0]',
    ':MESH_OUTBOUND - [0:0]',
    ':MESH_OUTBOUND_REDIRECT - [0:0]',
    '-A PREROUTING -m addrtype --dst-type LOCAL -j DOCKER',
    '-A PREROUTING -p tcp -m comment --comment "mesh/transparent-proxy" -j MESH_INBOUND',
    '-A OUTPUT -p udp -m udp --dport 53 -m owner --uid-owner 5678 -m comment --comment "mesh/transparent-proxy" -j RETURN',
    '-A OUTPUT -p tcp -m tcp --dport 9999 -j RETURN',
    '-A OUTPUT -p tcp -m comment --comment "mesh/transparent-proxy" -j MESH_OUTBOUND',
    '-A DOCKER -i docker0 -j RETURN',
    '-A MESH_INBOUND -p tcp -j MESH_INBOUND_REDIRECT',
    '-A MESH_OUTBOUND -j MESH_OUTBOUND_REDIRECT',
    '-A MESH_INBOUND_REDIRECT -p tcp -j REDIRECT --to-ports 15006',
    '-A MESH_OUTBOUND_REDIRECT -p tcp -j REDIRECT --to-ports 15001',
    'COMMIT',
  );

  it('deletes exactly the marked rules of the built-in chains, then flushes and deletes its own chains', () => {
    expect(removalInput(saved)).toBe(
      lines(
        '*raw',
        '-D PREROUTING -s 10.0.0.53/32 -p udp -m udp --sport 53 -m comment --comment "mesh/transparent-proxy" -j CT --zone 1',
        '-D OUTPUT -p udp -m udp --dport 53 -m owner --uid-owner 5678 -m comment --comment "mesh/transparent-proxy" -j CT --zone 1',
        'COMMIT',
        '*nat',
        '-D PREROUTING -p tcp -m comment --comment "mesh/transparent-proxy" -j MESH_INBOUND',
        '-D OUTPUT -p udp -m udp --dport 53 -m owner --uid-owner 5678 -m comment --comment "mesh/transparent-proxy" -j RETURN',
        '-D OUTPUT -p tcp -m comment --comment "mesh/transparent-proxy" -j MESH_OUTBOUND',
        '-F MESH_INBOUND',
        '-F MESH_INBOUND_REDIRECT',
        '-F MESH_OUTBOUND',
        '-F MESH_OUTBOUND_REDIRECT',
        '-X MESH_INBOUND',
        '-X MESH_INBOUND_REDIRECT',
        '-X MESH_OUTBOUND',
        '-X MESH_OUTBOUND_REDIRECT',
        'COMMIT',
      ),
    );
  });

  it('has nothing to remove where it is not installed', () => {
    expect(removalInput(lines('*nat', ':PREROUTING ACCEPT [0:0]', ':DOCKER - [0:0]', '-A PREROUTING -j DOCKER', 'COMMIT'))).toBe('');
  });
});

describe('the name servers of resolv.conf', () => {
  it('are its nameserver lines, by address family', () => {
    const text = lines('# generated', 'search example.com', 'nameserver 10.0.0.53', 'nameserver fe80::1%eth0', '  nameserver 2001:db8::53', 'nameserver not-an-address', 'options ndots:5');
    expect(nameServersOf(text)).toEqual({ 4: ['10.0.0.53'], 6: ['fe80::1', '2001:db8::53'] });
  });
});
