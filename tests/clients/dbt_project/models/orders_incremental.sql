{{ config(materialized='incremental', unique_key=['id'], distributed_by=['id'], buckets=1,
          properties={'replication_num': '1'}) }}
select id, city, amount, order_date from {{ ref('stg_orders') }}
{% if is_incremental() %}
where id > (select max(id) from {{ this }})
{% endif %}
