(function(){
// Pointing at a component (or focusing it) lights up what blocks it and what it blocks,
// in place of lines drawn across the stack; the lists inside the tiles say the same in text.
function blockers(c){ return c.dataset.blockedBy ? c.dataset.blockedBy.split(' ') : []; }
function light(c, on){
  c.classList.toggle('hl-self', on);
  blockers(c).forEach(function(id){ const t=document.getElementById(id); if(t) t.classList.toggle('hl-blocker', on); });
  const stack=c.closest('.stack'); if(!stack) return;
  stack.querySelectorAll('.comp[data-blocked-by]').forEach(function(o){
    if(blockers(o).indexOf(c.id)>=0) o.classList.toggle('hl-blocked', on);
  });
}
document.addEventListener('mouseover', function(e){ const c=e.target.closest && e.target.closest('.comp[id]'); if(c) light(c, true); });
document.addEventListener('mouseout', function(e){ const c=e.target.closest && e.target.closest('.comp[id]'); if(c) light(c, false); });
document.addEventListener('focusin', function(e){ const c=e.target.closest && e.target.closest('.comp[id]'); if(c) light(c, true); });
document.addEventListener('focusout', function(e){ const c=e.target.closest && e.target.closest('.comp[id]'); if(c) light(c, false); });
function filter(){
  const st=document.getElementById('f-status').value, ly=document.getElementById('f-layer').value,
        nm=document.getElementById('f-node').value.trim().toLowerCase();
  const hit=function(names){ return !nm || names.toLowerCase().split(' ').some(function(n){return n.includes(nm);}); };
  let shown=0;
  document.querySelectorAll('.fleet-row, article.rc').forEach(function(el){
    const ok=(!st||el.dataset.status===st)&&(!ly||el.dataset.layer===ly)&&hit(el.dataset.nodes);
    el.classList.toggle('hidden',!ok);
  });
  document.querySelectorAll('#stacks .node').forEach(function(el){
    const ok=(!st||el.dataset.status===st)&&hit(el.dataset.node);
    el.classList.toggle('hidden',!ok); if(ok) shown++;
    el.querySelectorAll('.layer').forEach(function(l){ l.classList.toggle('dim', !!ly && l.dataset.layer!==ly); });
  });
  document.getElementById('f-count').textContent=shown+' nodes shown';
}
['f-status','f-layer','f-node'].forEach(function(id){ document.getElementById(id).addEventListener('input',filter); });
filter();
document.documentElement.dataset.renderMs=String(Math.round(performance.now()));
})();
