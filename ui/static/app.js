// PowerContext operations dashboard: Retry / Cancel buttons over the Operation API, a flash message that survives
// the reload after a successful action, and a gentle auto-refresh. No framework, no build step; text is always
// inserted with textContent, never as HTML.
(function () {
  'use strict';

  var FLASH_KEY = 'pc-ui-flash';
  var LABEL = { retry: 'Retry', cancel: 'Cancel', skip: 'Skip' };
  var PENDING = { retry: 'Retrying…', cancel: 'Cancelling…', skip: 'Skipping…' };
  // Actions that need a second click: what the first click says.
  var CONFIRM = {
    cancel: 'Click “Confirm cancel” to cancel this operation.',
    skip: 'Click “Confirm skip” to move past this window: its Sources will never reach Memory or Experience.'
  };
  var busy = false; // an action is in flight or its message is on screen: do not auto-refresh

  function showFlash() {
    var text = null;
    try { text = sessionStorage.getItem(FLASH_KEY); sessionStorage.removeItem(FLASH_KEY); } catch (e) { /* storage off */ }
    var el = document.getElementById('flash');
    if (text && el) { el.textContent = text; el.hidden = false; }
  }

  function sel(id) { return window.CSS && CSS.escape ? CSS.escape(id) : id; }

  function msgFor(button) {
    return document.querySelector('.msg[data-msg-for="' + sel(button.dataset.opId) + '"]');
  }

  function say(el, kind, text, withReload) {
    if (!el) { return; }
    el.className = 'msg ' + kind;
    el.textContent = text;
    if (withReload) {
      var b = document.createElement('button');
      b.type = 'button';
      b.textContent = 'Reload';
      b.addEventListener('click', function () { location.reload(); });
      el.appendChild(b);
    }
  }

  function setDisabled(button, on) {
    document.querySelectorAll('button.act[data-op-id="' + sel(button.dataset.opId) + '"]')
      .forEach(function (b) { b.disabled = on; });
  }

  function describeFailure(status, body) {
    var err = body && body.error ? body.error : {};
    var d = err.details || {};
    if (status === 409 && err.code === 'operation_conflict') {
      var now = d.status ? 'now ' + d.status : 'its state moved';
      var ver = d.actual_version ? ', version ' + d.actual_version : '';
      return { kind: 'conflict', reload: true,
        text: 'This operation changed (' + now + ver + ') — reload to act on its current state. ' };
    }
    if (status === 401) {
      return { kind: 'bad', reload: false, text: 'Not signed in (HTTP 401): open /ui/login to sign in again.' };
    }
    if (status === 404) {
      return { kind: 'bad', reload: true, text: 'This operation no longer exists (HTTP 404). ' };
    }
    var code = err.code ? ' ' + err.code : '';
    var message = err.message ? ': ' + err.message : '';
    return { kind: 'bad', reload: false, text: 'Request failed (HTTP ' + status + code + ')' + message };
  }

  function send(button) {
    var id = button.dataset.opId;
    var action = button.dataset.action;
    var version = parseInt(button.dataset.version, 10);
    var el = msgFor(button);
    busy = true;
    setDisabled(button, true);
    say(el, 'pending', PENDING[action] || 'Working…', false);
    fetch('/v1/operations/' + encodeURIComponent(id) + '/' + action, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json', 'X-PowerContext-UI': '1' },
      body: JSON.stringify({ expected_version: version })
    }).then(function (res) {
      return res.json().catch(function () { return null; }).then(function (body) { return { status: res.status, body: body }; });
    }).then(function (r) {
      if (r.status === 200 && r.body) {
        var verb = LABEL[action] || action;
        var text = verb + ' accepted: operation ' + id.slice(0, 8) + ' is now ' + r.body.status +
          ' (version ' + r.body.state_version + ').';
        say(el, 'ok', text, false);
        try { sessionStorage.setItem(FLASH_KEY, text); } catch (e) { /* storage off */ }
        location.reload();
        return;
      }
      var f = describeFailure(r.status, r.body);
      say(el, f.kind, f.text, f.reload);
      setDisabled(button, f.kind === 'conflict'); // a stale page cannot act any more
    }).catch(function () {
      say(el, 'bad', 'The server could not be reached; nothing was changed by this page.', false);
      setDisabled(button, false);
    });
  }

  function onClick(ev) {
    var button = ev.target.closest('button.act[data-action]');
    if (!button || button.disabled) { return; }
    var action = button.dataset.action;
    if (CONFIRM[action] && button.dataset.armed !== '1') {
      // Two-step cancel and skip: the first click arms the button for five seconds.
      button.dataset.armed = '1';
      button.classList.add('armed');
      button.textContent = 'Confirm ' + action;
      busy = true;
      say(msgFor(button), 'pending', CONFIRM[action], false);
      setTimeout(function () {
        if (button.dataset.armed === '1' && !button.disabled) {
          button.dataset.armed = '';
          button.classList.remove('armed');
          button.textContent = LABEL[action];
          say(msgFor(button), '', '', false);
          busy = false;
        }
      }, 5000);
      return;
    }
    if (button.dataset.armed === '1') {
      button.dataset.armed = '';
      button.classList.remove('armed');
      button.textContent = LABEL[action];
    }
    send(button);
  }

  function autoRefresh() {
    var secs = parseInt(document.body.dataset.autorefresh || '0', 10);
    if (!(secs > 0)) { return; }
    setTimeout(function tick() {
      if (busy || document.hidden) { setTimeout(tick, secs * 1000); return; }
      location.reload();
    }, secs * 1000);
  }

  document.addEventListener('DOMContentLoaded', function () {
    showFlash();
    document.addEventListener('click', onClick);
    autoRefresh();
  });
}());
