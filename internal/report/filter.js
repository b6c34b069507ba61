(function () {
  // The filter of every page: radio buttons named "show" keep the rows
  // whose data-show lists the chosen value ("all" keeps every row), the
  // search box keeps rows whose data-search contains its text, and the
  // choice lives in the URL fragment (#show=fail&find=0008) so a shared
  // link opens the same view.
  var rows = Array.prototype.slice.call(document.querySelectorAll('#rows [data-search]'));
  var find = document.getElementById('find'), shown = document.getElementById('shown');
  function show() {
    var sel = document.querySelector('input[name=show]:checked').value, q = find.value.trim().toLowerCase(), n = 0;
    rows.forEach(function (row) {
      var states = (row.getAttribute('data-show') || '').split(' ');
      var ok = (sel === 'all' || states.indexOf(sel) >= 0) && (q === '' || row.getAttribute('data-search').toLowerCase().indexOf(q) >= 0);
      row.hidden = !ok;
      if (ok) { n++; }
    });
    shown.textContent = n + ' shown';
    var h = 'show=' + sel + (q ? '&find=' + encodeURIComponent(q) : '');
    if (location.hash.slice(1) !== h && history.replaceState) { history.replaceState(null, '', '#' + h); }
  }
  document.querySelectorAll('input[name=show]').forEach(function (r) { r.addEventListener('change', show); });
  find.addEventListener('input', show);
  var params = {};
  location.hash.slice(1).split('&').forEach(function (kv) { var p = kv.split('='); if (p[0]) { params[p[0]] = decodeURIComponent(p[1] || ''); } });
  if (params.show) { var r = document.querySelector('input[name=show][value="' + params.show + '"]'); if (r) { r.checked = true; } }
  if (params.find) { find.value = params.find; }
  show();
})();
