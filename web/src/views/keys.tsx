// Keys (admin scope): create with a scope (the secret is shown once), list, revoke.
import { useEffect, useState } from 'preact/hooks';
import { call, type Answer } from '../api';
import { ErrorNote } from '../ui';

type Key = Answer<'/api/v1/keys', 'get'>['data'][number];
type Scope = 'read' | 'write' | 'admin';

export function KeysView() {
  const [keys, setKeys] = useState<Key[] | null>(null);
  const [scope, setScope] = useState<Scope>('read');
  const [label, setLabel] = useState('');
  const [secret, setSecret] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const load = () =>
    call('get', '/api/v1/keys')
      .then((r) => {
        setKeys(r.data);
        setError(null);
      })
      .catch(setError);
  useEffect(() => {
    void load();
  }, []);
  return (
    <section>
      <h1>Keys</h1>
      <ErrorNote error={error} />
      <form
        class="card"
        onSubmit={async (e) => {
          e.preventDefault();
          try {
            const res = await call('post', '/api/v1/keys', { body: { scope, label: label || null } });
            setSecret(res.data.key);
            setLabel('');
            await load();
          } catch (err) {
            setError(err);
          }
        }}
      >
        <h2>New key</h2>
        <div class="row wrap">
          <label class="inline">
            Scope
            <select value={scope} onChange={(e) => setScope(e.currentTarget.value as Scope)}>
              <option value="read">read</option>
              <option value="write">write</option>
              <option value="admin">admin</option>
            </select>
          </label>
          <label class="inline">
            Label <input value={label} onInput={(e) => setLabel(e.currentTarget.value)} />
          </label>
          <button type="submit">Create key</button>
        </div>
        {secret && (
          <p role="status" class="secret">
            Copy this key now; it is not shown again: <code data-testid="new-key">{secret}</code>
          </p>
        )}
      </form>
      {keys && (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th>id</th>
                <th>prefix</th>
                <th>scope</th>
                <th>label</th>
                <th>created</th>
                <th>state</th>
              </tr>
            </thead>
            <tbody>
              {keys.map((k) => (
                <tr key={k.id} data-testid="key-row" data-prefix={k.prefix}>
                  <td>{k.id}</td>
                  <td>
                    <code>{k.prefix}</code>
                  </td>
                  <td>{k.scope}</td>
                  <td>{k.label ?? ''}</td>
                  <td>{new Date(k.created_at).toLocaleString()}</td>
                  <td>
                    {k.revoked_at ? (
                      `revoked ${new Date(k.revoked_at).toLocaleString()}`
                    ) : (
                      <button
                        type="button"
                        class="danger"
                        onClick={async () => {
                          try {
                            await call('delete', '/api/v1/keys/{key_id}', { path: { key_id: k.id } });
                            await load();
                          } catch (err) {
                            setError(err);
                          }
                        }}
                      >
                        Revoke
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
